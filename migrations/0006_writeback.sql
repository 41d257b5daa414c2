-- Write-back state (issue #9 §3): what Relay keeps about an issue (gaps, findings, the spec),
-- about a repository (learnings), and the outbox of tracker writes.
--
-- Invariant: the executor writes the state changes AND the outbox rows of one action batch in one
-- transaction, before any tracker call. Only the outbox drain talks to trackers, and every write
-- carries its idempotency key as a hidden marker, so a crash between "the tracker accepted it" and
-- "the outbox recorded it" is detected by looking for the marker instead of posting again.

-- Open questions. `number` is the short id the planner and people see ("gap 3"), per issue.
CREATE TABLE gaps (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- issues.id (no foreign key, as for issue_notes: issues are never deleted).
    issue_id       BIGINT      NOT NULL,
    number         INT         NOT NULL CHECK (number > 0),
    question       TEXT        NOT NULL,
    severity       TEXT        NOT NULL CHECK (severity IN ('blocking', 'high', 'medium', 'low')),
    respondent     TEXT        NOT NULL CHECK (respondent IN ('reporter', 'assignee')),
    evidence       TEXT,
    status         TEXT        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
    close_reason   TEXT        CHECK (close_reason IN ('answered', 'inferred', 'not_relevant')),
    close_note     TEXT,
    -- jobs.id of the runs that opened / closed it.
    opened_by_run  BIGINT,
    closed_by_run  BIGINT,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    closed_at      TIMESTAMPTZ,
    UNIQUE (issue_id, number),
    CHECK ((status = 'open') = (close_reason IS NULL))
);

-- Facts verified in the code. `number` is the short id per issue; removed findings keep their
-- row (and number) so a number never points at a different finding later.
CREATE TABLE findings (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    issue_id        BIGINT      NOT NULL,
    number          INT         NOT NULL CHECK (number > 0),
    synthesis       TEXT        NOT NULL,
    created_by_run  BIGINT,
    removed         BOOLEAN     NOT NULL DEFAULT false,
    -- Why it was removed: 'planner' (update_findings.remove) or 'cap' (dropped past the limit).
    removed_reason  TEXT,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (issue_id, number)
);
CREATE INDEX findings_live_idx ON findings (issue_id, number) WHERE NOT removed;

-- Where a finding was seen, and the commit the citation was verified at.
CREATE TABLE finding_sources (
    finding_id  BIGINT NOT NULL REFERENCES findings (id) ON DELETE CASCADE,
    position    INT    NOT NULL,
    path        TEXT   NOT NULL,
    start_line  INT    NOT NULL CHECK (start_line > 0),
    end_line    INT    NOT NULL CHECK (end_line >= start_line),
    quote       TEXT,
    commit_sha  TEXT   NOT NULL,
    PRIMARY KEY (finding_id, position)
);

-- Durable facts about a repository (tracker + project), shared by all its issues.
CREATE TABLE learnings (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tracker        TEXT        NOT NULL,
    project_id     TEXT        NOT NULL,
    kind           TEXT        NOT NULL CHECK (kind IN ('domain', 'code')),
    content        TEXT        NOT NULL,
    -- sha256 (hex) of the content lowercased with whitespace runs collapsed: the dedupe key.
    content_hash   TEXT        NOT NULL,
    issue_id       BIGINT,
    created_by_run BIGINT,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (tracker, project_id, content_hash)
);

-- Specs, versioned per issue.
CREATE TABLE specs (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    issue_id    BIGINT      NOT NULL,
    version     INT         NOT NULL CHECK (version > 0),
    body        TEXT        NOT NULL,
    status      TEXT        NOT NULL DEFAULT 'draft'
                CHECK (status IN ('draft', 'posted', 'approved', 'rejected')),
    note        TEXT,
    -- The tracker note ids it was posted as (one per part).
    note_ids    TEXT[]      NOT NULL DEFAULT '{}',
    created_by_run BIGINT,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (issue_id, version)
);

-- Tracker writes, recorded before they are attempted.
CREATE TABLE outbox (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- Deterministic from (issue, job, action index, part): a replayed batch maps to the same keys,
    -- and the key is the hidden marker the drain looks for before retrying.
    idempotency_key   TEXT        NOT NULL UNIQUE,
    issue_id          BIGINT      NOT NULL,
    job_id            BIGINT,
    kind              TEXT        NOT NULL CHECK (kind IN ('comment', 'reply', 'edit', 'reaction')),
    body              TEXT        NOT NULL,
    -- Reply: the note being answered and its discussion; edit: the note to edit; reaction: the note
    -- reacted to (NULL = the issue itself).
    target_note_id    TEXT,
    target_discussion_id TEXT,
    status            TEXT        NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'sent', 'failed')),
    attempts          INT         NOT NULL DEFAULT 0,
    -- Set when an attempt started and may have reached the tracker: the next attempt first looks
    -- for the marker.
    maybe_sent        BOOLEAN     NOT NULL DEFAULT false,
    next_attempt_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    note_id           TEXT,
    discussion_id     TEXT,
    last_error        TEXT,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    sent_at           TIMESTAMPTZ
);
CREATE INDEX outbox_pending_idx ON outbox (issue_id, id) WHERE status = 'pending';

-- The read API lists an issue's jobs. `payload` is never updated, so this index keeps the job
-- row's frequent status/lease updates HOT. Indexed as text: a cast could make a malformed payload
-- fail its enqueue instead of its job.
CREATE INDEX jobs_issue_idx ON jobs ((payload->>'issue_id')) WHERE kind = 'process_issue';
