# palaestra/web: + Chromium's headless shell, for the web and mobile families.
FROM palaestra/core AS build
USER root
COPY docker/.wheels /wheels
RUN /opt/palaestra/bin/pip install -q --no-index --find-links /wheels "palaestra[synth,web,mobile]"

FROM palaestra/core
USER root
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
        chromium-headless-shell fonts-dejavu-core libatomic1 \
    && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man
COPY --from=build /opt/palaestra /opt/palaestra
USER 65534:65534
