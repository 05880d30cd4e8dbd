CREATE INDEX firehose_important_id_idx ON firehose_messages (id) WHERE important;
