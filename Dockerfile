# The image `kresched manifests` runs as a CronJob (ghcr.io/kresched/kresched:<version>):
#   docker build -t ghcr.io/kresched/kresched:$(python -c 'import kresched; print(kresched.__version__)') .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

WORKDIR /build
COPY pyproject.toml README.pypi.md ./
COPY kresched ./kresched
RUN pip install . && cd / && rm -rf /build
WORKDIR /

# A numeric non-root user (the CronJob's runAsUser), so that runAsNonRoot can verify it.
RUN groupadd --system --gid 65532 kresched \
    && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin kresched
USER 65532:65532

ENTRYPOINT ["kresched"]
CMD ["--help"]
