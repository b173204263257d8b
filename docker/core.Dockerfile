# palaestra/core: Python and palaestra (with the usersim extra); hosts usersim and the benchmark fixture, and the gateway.
# The wheels are installed in a build stage, so they never become a layer of the image.
FROM palaestra/debian:bookworm AS build
ENV DEBIAN_FRONTEND=noninteractive PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 python3-venv
COPY docker/.wheels /wheels
RUN python3 -m venv /opt/palaestra \
    && /opt/palaestra/bin/pip install -q --no-index --find-links /wheels "palaestra[synth,usersim]"

FROM palaestra/debian:bookworm
ENV DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE=1
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 \
    && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man \
    && mkdir /data && chown 65534:65534 /data
COPY --from=build /opt/palaestra /opt/palaestra
ENV PATH=/opt/palaestra/bin:$PATH HOME=/tmp PALAESTRA_HOME=/tmp/palaestra
USER 65534:65534
# a worker: python -m palaestra.workers.host --socket /run/palaestra/w.sock --name NAME
CMD ["palaestra", "serve", "--host", "0.0.0.0"]
