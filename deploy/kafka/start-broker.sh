#!/bin/bash
# The compose broker: SASL/SCRAM on every client listener, ACLs enforced, the controller on loopback.
# Written as a whole server.properties (not the image's KAFKA_* variables). No password is ever on a
# command line (visible in ps): the admin's SCRAM credentials are set through the container's own
# loopback listener once the broker answers, from a 0600 file, on every start (so a changed
# KAFKA_ADMIN_PASSWORD takes effect); formatting the storage with the SCRAM user would show it.
set -euo pipefail
: "${KAFKA_ADMIN_PASSWORD:?KAFKA_ADMIN_PASSWORD must be set (see deploy/compose-env.sh)}"
umask 077
conf=/tmp/fleetpulse-broker
mkdir -p "$conf"
cat >"$conf/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
controller.listener.names=CONTROLLER
# INTERNAL: the compose network (kafka:9092); HOST: the published port, for clients on the host;
# LOCAL: the container's own loopback (the broker's own traffic and the admin's set-up, as ANONYMOUS).
listeners=INTERNAL://:9092,HOST://:19092,LOCAL://127.0.0.1:9094,CONTROLLER://127.0.0.1:9093
advertised.listeners=INTERNAL://kafka:9092,HOST://localhost:19092,LOCAL://127.0.0.1:9094
listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,HOST:SASL_PLAINTEXT,LOCAL:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=LOCAL
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.internal.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.host.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
# ANONYMOUS is only ever the broker itself on its loopback listeners (LOCAL, CONTROLLER).
super.users=User:admin;User:ANONYMOUS
log.dirs=/var/lib/kafka/data
num.partitions=3
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
cat >"$conf/admin.properties" <<PROPS
security.protocol=SASL_PLAINTEXT
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="${KAFKA_ADMIN_PASSWORD}";
PROPS
# printf is a shell builtin: the password reaches the file without a process of its own
printf 'SCRAM-SHA-512=[iterations=8192,password=%s]\n' "$KAFKA_ADMIN_PASSWORD" >"$conf/admin-scram.properties"
# A stable cluster id per volume; --ignore-formatted keeps existing data. The data folder is the owner's only.
chmod 700 /var/lib/kafka/data 2>/dev/null || true
id_file=/var/lib/kafka/data/.fleetpulse-cluster-id
[ -s "$id_file" ] || /opt/kafka/bin/kafka-storage.sh random-uuid >"$id_file"
/opt/kafka/bin/kafka-storage.sh format --ignore-formatted -t "$(cat "$id_file")" -c "$conf/server.properties"
/opt/kafka/bin/kafka-server-start.sh "$conf/server.properties" &
broker=$!
trap 'kill -TERM "$broker" 2>/dev/null || true' TERM INT
until /opt/kafka/bin/kafka-configs.sh --bootstrap-server 127.0.0.1:9094 --alter --entity-type users \
  --entity-name admin --add-config-file "$conf/admin-scram.properties" >/dev/null 2>&1; do
  kill -0 "$broker" 2>/dev/null || { wait "$broker"; exit $?; }
  sleep 1
done
rm -f "$conf/admin-scram.properties"
echo "admin: SCRAM-SHA-512 credentials set"
set +e
wait "$broker"
status=$?
# a signal ends the first wait early: wait for the broker's own exit
kill -0 "$broker" 2>/dev/null && { wait "$broker"; status=$?; }
exit "$status"
