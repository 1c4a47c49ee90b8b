-- Builds kv.db (run natively, not traced): 200000 rows of ~190 bytes in a
-- rowid table, inserted in a scrambled key order (k = i * 40503 mod 200000,
-- a permutation), so neighbouring keys sit on leaf pages allocated far
-- apart. About 43 MB, 10.6k pages of 4 KiB.
PRAGMA page_size = 4096;
CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB);
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 199999)
INSERT INTO kv SELECT (i * 40503) % 200000, printf('%.180c', char(65 + i % 26)) || i FROM c;
