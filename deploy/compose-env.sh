#!/bin/sh
# Writes a .env for docker compose with fresh random secrets: ./deploy/compose-env.sh > .env
# Every value is required by docker-compose.yml; compose stops with a message naming any that is unset.
set -eu
secret() { python3 -c 'import secrets; print(secrets.token_urlsafe(32))'; }
for name in FLEETPULSE_WEBHOOKS__SECRET FLEETPULSE_DETECT__OPS_TOKEN KAFKA_ADMIN_PASSWORD KAFKA_DETECTOR_PASSWORD \
  KAFKA_DISPATCHER_PASSWORD KAFKA_SIMULATOR_PASSWORD KAFKA_ARCHIVER_PASSWORD KAFKA_AGENT_PASSWORD \
  KAFKA_OPERATOR_PASSWORD GRAFANA_ADMIN_PASSWORD; do
  echo "$name=$(secret)"
done
