# palaestra/cad: + build123d and its OpenCascade wheel.
FROM palaestra/core
USER root
COPY docker/.wheels /wheels
RUN /opt/palaestra/bin/pip install -q --no-index --find-links /wheels "palaestra[synth,cad]" \
    && rm -rf /wheels
USER 65534:65534
