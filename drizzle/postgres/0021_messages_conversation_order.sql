-- A conversation's messages in id order, read from the end for its latest turns (a model's history, every
-- turn): the analytics index orders them by time, so those reads sorted the whole conversation.
CREATE INDEX "messages_conversation_order_idx" ON "messages" USING btree ("conversation_id","id");
