# The judgebox gateway: nginx (Debian's nginx-light) load-balancing the executor replicas that Docker's
# DNS returns for the service name `executor`. Build from the repository root:
#   docker build -f docker/gateway.Dockerfile -t judgebox-gateway .
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx-light \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && rm -f /etc/nginx/sites-enabled/default
COPY docker/gateway/nginx.conf.template /etc/nginx/nginx.conf.template
COPY docker/gateway/entrypoint.sh /usr/local/bin/judgebox-gateway
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080"]
ENTRYPOINT ["/usr/local/bin/judgebox-gateway"]
