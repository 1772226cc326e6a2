# Image for the fleetpulse parts in docker-compose.yml (the broker is the official apache/kafka image).
# Dependencies come from uv.lock, the same versions `make test` and CI run with.
FROM python:3.11-slim
ENV UV_PROJECT_ENVIRONMENT=/opt/fleetpulse UV_COMPILE_BYTECODE=1 PATH=/opt/fleetpulse/bin:$PATH
RUN pip install --no-cache-dir "uv==0.13.9"
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project
COPY schemas ./schemas
COPY ground ./ground
COPY producers ./producers
COPY streams ./streams
COPY analytics ./analytics
COPY fleetpulse ./fleetpulse
RUN uv sync --frozen --no-dev --no-editable
ENTRYPOINT []
CMD ["fleetpulse", "--help"]
