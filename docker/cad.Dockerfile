# palaestra/cad: + build123d and its OpenCascade wheel.
FROM palaestra/core AS build
USER root
COPY docker/.wheels /wheels
RUN /opt/palaestra/bin/pip install -q --no-index --find-links /wheels "palaestra[synth,cad]"

FROM palaestra/core
COPY --from=build /opt/palaestra /opt/palaestra
