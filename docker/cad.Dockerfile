# palaestra/cad: + build123d and its OpenCascade wheel (which links libGL, though it never draws),
# and bubblewrap for run_code's agent-code sandbox.
FROM palaestra/core AS build
USER root
COPY docker/.wheels /wheels
RUN /opt/palaestra/bin/pip install -q --no-index --find-links /wheels "palaestra[synth,cad]"

FROM palaestra/core
USER root
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends libgl1 bubblewrap \
    && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man
COPY --from=build /opt/palaestra /opt/palaestra
# run_code runs agent code in the nested sandbox: see docker/computer.Dockerfile
LABEL palaestra.agent-sandbox="nested"
USER 65534:65534
