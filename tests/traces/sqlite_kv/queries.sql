-- The traced run (tests/traces/record_sqlite_kv.sh). Memory-mapped I/O
-- for the whole database, so SQLite reads its pages in place (in the page
-- cache) and every access to them is an access of the traced program (a
-- read(2) would copy them in the kernel, which Lackey does not see).
PRAGMA mmap_size = 268435456;
-- Phase 1: count the rows: walks every page of the table once.
SELECT count(*) FROM kv;
-- Phase 2: 40000 point lookups, 90% in the hot key range 20000..29999
-- (visited in a scrambled order), 10% anywhere.
WITH RECURSIVE q(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM q WHERE i < 39999)
SELECT sum(length(kv.v)) FROM q CROSS JOIN kv ON kv.k =
  CASE WHEN q.i % 10 = 0 THEN (q.i * 7919) % 200000 ELSE 20000 + (q.i * 7919) % 10000 END;
-- Phase 3: the hot range moves to 120000..129999.
WITH RECURSIVE q(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM q WHERE i < 39999)
SELECT sum(length(kv.v)) FROM q CROSS JOIN kv ON kv.k =
  CASE WHEN q.i % 10 = 0 THEN (q.i * 7919) % 200000 ELSE 120000 + (q.i * 7919) % 10000 END;
