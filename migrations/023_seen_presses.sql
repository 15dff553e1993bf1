-- Presses seen, by the platform's own id of each (docs/platforms.md#redeliveries): a button's press, or a
-- GitHub comment that answers a request. The same signed body posted again finds its key here and
-- changes nothing, says nothing. Messages need no row: each one's workflow is named by its own id.
CREATE TABLE seen_presses (
    platform   text NOT NULL,
    press_key  text NOT NULL,
    seen_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (platform, press_key)
);
