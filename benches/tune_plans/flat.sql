-- name: lookup_range
SELECT count(*), sum(a) FROM tp_facts WHERE id BETWEEN 100000 AND 400000;
-- name: small_group
SELECT c, count(*) FROM tp_facts WHERE id <= 600000 GROUP BY c;
