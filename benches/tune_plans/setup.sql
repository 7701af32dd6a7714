-- The data of the plan-guided tune's benchmark (benches/tune.sh, PLANS=1): a fact table of
-- 3M rows and an orders table of 1M.
CREATE TABLE tp_facts AS
  SELECT g AS id, g % 5000 AS k, (g * 7) % 1000000 AS order_id,
         (g % 1000) / 10.0 AS a, (g % 37) / 3.0 AS b, g % 97 AS c
  FROM generate_series(1, 3000000) g;
CREATE TABLE tp_orders AS
  SELECT g AS order_id, md5(g::text) AS note, g % 50 AS region
  FROM generate_series(0, 999999) g;
ANALYZE tp_facts;
ANALYZE tp_orders;
