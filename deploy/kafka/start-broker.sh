#!/bin/bash
# The compose broker: SASL/SCRAM on every client listener, ACLs enforced, the controller on loopback.
# Written as a whole server.properties (not the image's KAFKA_* variables) because the SCRAM admin
# must exist before the broker first starts: `kafka-storage format --add-scram` is the only way in.
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
# INTERNAL: the compose network (kafka:9092); HOST: the published port, for clients on the host.
listeners=INTERNAL://:9092,HOST://:19092,CONTROLLER://127.0.0.1:9093
advertised.listeners=INTERNAL://kafka:9092,HOST://localhost:19092
listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT,HOST:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=INTERNAL
sasl.enabled.mechanisms=SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.internal.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="${KAFKA_ADMIN_PASSWORD}";
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
# ANONYMOUS is only ever the broker itself on the loopback controller listener.
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
# A stable cluster id per volume; --ignore-formatted keeps existing data (and the admin it was formatted with).
id_file=/var/lib/kafka/data/.fleetpulse-cluster-id
[ -s "$id_file" ] || /opt/kafka/bin/kafka-storage.sh random-uuid >"$id_file"
/opt/kafka/bin/kafka-storage.sh format --ignore-formatted -t "$(cat "$id_file")" \
  -c "$conf/server.properties" --add-scram "SCRAM-SHA-512=[name=admin,password=${KAFKA_ADMIN_PASSWORD}]"
exec /opt/kafka/bin/kafka-server-start.sh "$conf/server.properties"
