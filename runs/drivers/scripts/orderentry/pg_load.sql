-- Order-entry workload (derived from TPC-C): one warehouse, loaded by one pgbench client (-c <warehouses> -t 1:
-- client i loads warehouse i + 1, the warehouses in parallel). Customers' last names come from the specification's
-- syllables: customers 1-1000 of a district take the numbers 0-999 in turn, the others NURand(255, 0, 999) with
-- C = 157 (the run's C, 223, differs from it by 66, within the specification's rule).
\set w :client_id + 1
BEGIN;
INSERT INTO oe_warehouse VALUES (:w, 'wh-' || :w, 'street one', 'street two', 'city', 'ST', '123411111',
  (random() * 0.2)::numeric(4, 4), 300000.00);
INSERT INTO oe_district SELECT :w, d, 'dist-' || d, 'street one', 'street two', 'city', 'ST', '123411111',
  (random() * 0.2)::numeric(4, 4), 30000.00, 3001 FROM generate_series(1, 10) d;
INSERT INTO oe_customer
  SELECT :w, d, c, left(md5(random()::text), 8 + c % 9), 'OE',
         (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n / 100 + 1]
           || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n / 10 % 10 + 1]
           || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n % 10 + 1],
         'street one', 'street two', 'city', 'ST', '123411111', '0123456789012345', now(),
         CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000.00, (random() * 0.5)::numeric(4, 4), -10.00, 10.00, 1, 0,
         repeat(md5(random()::text), 10)
  FROM generate_series(1, 10) d, generate_series(1, 3000) c,
       LATERAL (SELECT CASE WHEN c <= 1000 THEN c - 1
                            ELSE ((floor(random() * 256)::int | floor(random() * 1000)::int) + 157) % 1000 END AS n) names;
INSERT INTO oe_history SELECT c, d, :w, d, :w, now(), 10.00, 'loaded'
  FROM generate_series(1, 10) d, generate_series(1, 3000) c;
-- Each district's 3,000 orders belong to a random permutation of its customers; 2,101-3,000 are not delivered yet.
INSERT INTO oe_orders
  SELECT :w, d, o, c, now(), CASE WHEN o < 2101 THEN 1 + floor(random() * 10)::int END, 5 + floor(random() * 11)::int, 1
  FROM (SELECT d, c, row_number() OVER (PARTITION BY d ORDER BY random()) AS o
        FROM generate_series(1, 10) d, generate_series(1, 3000) c) permuted;
INSERT INTO oe_new_order SELECT :w, d, o FROM generate_series(1, 10) d, generate_series(2101, 3000) o;
INSERT INTO oe_order_line
  SELECT o_w_id, o_d_id, o_id, n, 1 + floor(random() * 100000)::int, o_w_id, CASE WHEN o_id < 2101 THEN o_entry_d END,
         5, CASE WHEN o_id < 2101 THEN 0 ELSE (0.01 + random() * 9999.98)::numeric(6, 2) END, left(md5(random()::text), 24)
  FROM oe_orders, generate_series(1, o_ol_cnt) n WHERE o_w_id = :w;
INSERT INTO oe_stock
  SELECT :w, i, 10 + floor(random() * 91)::int, left(md5(random()::text), 24), 0, 0, 0,
         left(md5(random()::text) || md5(random()::text), 26 + i % 25)
  FROM generate_series(1, 100000) i;
COMMIT;
