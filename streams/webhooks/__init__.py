"""Alert webhooks: durable outbox, signed delivery with retries, receiver-side verification."""
