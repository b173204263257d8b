# palaestra/computer: + an X server, a window manager, desktop apps and bubblewrap.
FROM palaestra/core AS build
USER root
COPY docker/.wheels /wheels
RUN /opt/palaestra/bin/pip install -q --no-index --find-links /wheels "palaestra[synth,computer]"

FROM palaestra/core
USER root
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
        xvfb xdotool bubblewrap openbox xterm mousepad gnumeric wmctrl x11-utils fonts-dejavu-core \
        libxres1 dbus-daemon dconf-service gsettings-desktop-schemas libglib2.0-bin \
        at-spi2-core \
    && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man
# jeepney: the accessibility tree's D-Bus client (envs/computer/a11y.py)
COPY --from=build /opt/palaestra /opt/palaestra
# Its families run agent code in the nested sandbox (palaestra.envs.runtimes.sandbox): the Docker
# backend starts this image's workers as root in the container with the few capabilities that
# sandbox needs (palaestra.workers.docker.AGENT_SANDBOX_CAPS), not the default lockdown.
LABEL palaestra.agent-sandbox="nested"
USER 65534:65534
