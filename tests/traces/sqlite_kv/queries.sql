-- The traced run (tests/traces/record_sqlite_kv.sh). A page cache big
-- enough for the whole database, so pages once read stay in memory.
PRAGMA cache_size = -262144;
-- Phase 1: a full scan (reads every page into the cache).
SELECT count(*), sum(length(v)) FROM kv;
-- Phase 2: 30000 point lookups, 90% in the hot key range 20000..29999
-- (visited in a scrambled order), 10% anywhere.
WITH RECURSIVE q(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM q WHERE i < 29999)
SELECT sum(length(kv.v)) FROM q CROSS JOIN kv ON kv.k =
  CASE WHEN q.i % 10 = 0 THEN (q.i * 7919) % 200000 ELSE 20000 + (q.i * 7919) % 10000 END;
-- Phase 3: the hot range moves to 120000..129999.
WITH RECURSIVE q(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM q WHERE i < 29999)
SELECT sum(length(kv.v)) FROM q CROSS JOIN kv ON kv.k =
  CASE WHEN q.i % 10 = 0 THEN (q.i * 7919) % 200000 ELSE 120000 + (q.i * 7919) % 10000 END;
