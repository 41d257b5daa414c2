# syntax=docker/dockerfile:1
# Relay: one image, every role (`serve`, `gateway`, `worker`, `migrate`, ...).

FROM rust:1.95.0-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p relay \
 && cp target/release/relay /usr/local/bin/relay

FROM debian:bookworm-slim
# git: repository checkouts; ca-certificates: HTTPS to trackers and LLM APIs; curl: the healthcheck.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /var/lib/relay relay
COPY --from=build /usr/local/bin/relay /usr/local/bin/relay
COPY config/relay.toml /etc/relay/relay.toml
USER relay
WORKDIR /var/lib/relay
# 8080: webhooks and /healthz. 9090: the admin listener (/ui, /api, /readyz, /metrics, /healthz;
# a worker's only listener): publish it only where operators are.
ENV RELAY_CONFIG=/etc/relay/relay.toml \
    RELAY__SERVER__LISTEN=0.0.0.0:8080 \
    RELAY__SERVER__ADMIN_LISTEN=0.0.0.0:9090 \
    RELAY__LOG__FORMAT=json
EXPOSE 8080 9090
# Every role answers /healthz on the admin listener; with admin_listen "off", on 8080.
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD curl -fsS http://127.0.0.1:9090/healthz || curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["relay"]
CMD ["serve"]
