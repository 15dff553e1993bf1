-- What became of a codebase's checkout on its host, for the hosts page and the codebase page: a checkout
-- found missing is cloned again from its URL (`rebuilding`, then `rebuilt`), or stays `lost` when there is
-- no URL to clone from or the clone failed (the note says why); a move to another host is `moving` until
-- its records are moved. NULL: nothing happened to it.
ALTER TABLE codebases
    ADD COLUMN checkout_state text CHECK (checkout_state IN ('rebuilding', 'rebuilt', 'lost', 'moving', 'moved')),
    ADD COLUMN checkout_note text,
    ADD COLUMN checkout_changed_at timestamptz;
