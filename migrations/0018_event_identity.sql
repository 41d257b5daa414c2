-- One identity per event, whatever the path (webhook or reconciler).
--
-- A delivery is deduplicated by its delivery key (unchanged). An issue event is also identified
-- by its content (`relay_core::engage::event_key`: tracker, project, issue, note id, action, and
-- the tracker's updated_at for repeatable changes), unique per tracker: the same mention arriving
-- as a webhook, a redelivery with a new id, a replayed signed body or a reconciler find is one
-- event. A second arrival fails the intake statement on this index and rolls back like a
-- redelivery (nothing written, answered as a duplicate).
--
-- Deliveries recorded before this migration have no key (they stay unique by delivery key only).

ALTER TABLE deliveries
    ADD COLUMN origin    TEXT NOT NULL DEFAULT 'webhook' CHECK (origin IN ('webhook', 'reconcile')),
    ADD COLUMN event_key TEXT;

CREATE UNIQUE INDEX deliveries_event_key_idx ON deliveries (tracker, event_key)
    WHERE event_key IS NOT NULL;
