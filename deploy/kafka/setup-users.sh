#!/bin/bash
# Creates (or updates) one SCRAM user per fleetpulse part and grants the ACLs of acls.txt.
# Idempotent: run on every `docker compose up`; adding an existing ACL or password is a no-op.
set -euo pipefail
: "${KAFKA_ADMIN_PASSWORD:?KAFKA_ADMIN_PASSWORD must be set}"
bootstrap=${KAFKA_BOOTSTRAP:-kafka:9092}
umask 077
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/admin.properties" <<PROPS
security.protocol=SASL_PLAINTEXT
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="${KAFKA_ADMIN_PASSWORD}";
PROPS
bin=/opt/kafka/bin
# user -> environment variable holding its password; a user whose variable is empty is skipped
users="detector:KAFKA_DETECTOR_PASSWORD dispatcher:KAFKA_DISPATCHER_PASSWORD simulator:KAFKA_SIMULATOR_PASSWORD archiver:KAFKA_ARCHIVER_PASSWORD agent:KAFKA_AGENT_PASSWORD operator:KAFKA_OPERATOR_PASSWORD"
for entry in $users; do
  user=${entry%%:*}
  var=${entry##*:}
  password=${!var:-}
  if [ -z "$password" ]; then echo "skipping user $user: $var is not set"; continue; fi
  # the password goes through a file, not the command line (visible in ps)
  printf 'SCRAM-SHA-512=[iterations=8192,password=%s]\n' "$password" >"$work/user.properties"
  "$bin/kafka-configs.sh" --bootstrap-server "$bootstrap" --command-config "$work/admin.properties" \
    --alter --entity-type users --entity-name "$user" --add-config-file "$work/user.properties" >/dev/null
  echo "user $user: SCRAM-SHA-512 credentials set"
done
grep -v '^\s*\(#\|$\)' /fleetpulse/acls.txt | while read -r user operations type pattern name; do
  args=()
  for op in ${operations//,/ }; do args+=(--operation "$op"); done
  "$bin/kafka-acls.sh" --bootstrap-server "$bootstrap" --command-config "$work/admin.properties" --add \
    --allow-principal "User:$user" "${args[@]}" "--$type" "$name" --resource-pattern-type "$pattern" >/dev/null
  echo "acl: User:$user ${operations} on $pattern $type $name"
done
