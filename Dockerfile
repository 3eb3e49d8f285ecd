# One image for web, worker and gpu-worker; the command picks the role.
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap curl \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
# The CPU build of torch: GPU workers get the CUDA runtime from their own base image layer
# (see docker-compose.yml's gpu-worker build arg) rather than every web container.
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
RUN pip install --extra-index-url "$TORCH_INDEX" -r requirements.txt
COPY . .
RUN DEBUG=0 SECRET_KEY=collectstatic-only STATIC_ROOT=/app/staticfiles python manage.py collectstatic --noinput
RUN useradd --system --uid 10001 trainer && mkdir -p /app/var && chown trainer /app/var
USER trainer
EXPOSE 8000
