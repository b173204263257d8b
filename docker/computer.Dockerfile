# palaestra/computer: + an X server, a window manager, desktop apps and bubblewrap.
FROM palaestra/core
USER root
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
        xvfb xdotool bubblewrap openbox xterm mousepad gnumeric wmctrl x11-utils fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man
USER 65534:65534
