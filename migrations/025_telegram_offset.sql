-- Where Telegram's long polling has got to (workers/telegram_poller.py): the next update_id to ask for,
-- per bot. It moves on only after an update's workflow has started, so a poller killed in between asks
-- for that update again, and its workflow, named by the update_id, starts nothing twice.
CREATE TABLE telegram_offsets (
    bot_id      bigint PRIMARY KEY,
    next_offset bigint NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
