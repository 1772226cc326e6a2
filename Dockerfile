# Image for the fleetpulse parts in docker-compose.yml (the broker is the official apache/kafka image).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY fleetpulse ./fleetpulse
COPY schemas ./schemas
COPY producers ./producers
COPY streams ./streams
COPY analytics ./analytics
RUN pip install --no-cache-dir .
ENTRYPOINT []
CMD ["fleetpulse", "--help"]
