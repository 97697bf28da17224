-- Order-entry workload (derived from TPC-C): new-order, one transaction. 5-15 order lines; 1 % of the lines supplied
-- by another warehouse (when there is one); 1 % of new-orders name an item that does not exist as their last line
-- and roll back, as the specification asks. Stock rows are locked in key order (no deadlock between new-orders).
-- Variables: warehouses, home (1: each client keeps its home warehouse, client_id mod warehouses + 1).
\set w_id CASE WHEN :home = 1 THEN :client_id % :warehouses + 1 ELSE random(1, :warehouses) END
\set d_id random(1, 10)
\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\set ol_cnt random(5, 15)
\set bad CASE WHEN random(1, 100) = 1 THEN 1 ELSE 0 END
BEGIN;
SELECT c_discount, c_last, c_credit, w_tax FROM oe_customer, oe_warehouse
  WHERE w_id = :w_id AND c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
UPDATE oe_district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = :w_id AND d_id = :d_id
  RETURNING d_next_o_id - 1 AS o_id, d_tax
\gset
WITH lines AS MATERIALIZED (
  SELECT n AS ol_number,
         CASE WHEN :bad = 1 AND n = :ol_cnt THEN 100001
              ELSE ((floor(random() * 8192)::int | (1 + floor(random() * 100000))::int) + 3931) % 100000 + 1 END AS i_id,
         CASE WHEN :warehouses > 1 AND random() < 0.01
              THEN 1 + (:w_id + floor(random() * (:warehouses - 1))::int) % :warehouses ELSE :w_id END AS supply_w_id,
         1 + floor(random() * 10)::int AS qty
  FROM generate_series(1, :ol_cnt) n),
items AS MATERIALIZED (SELECT l.*, it.i_price FROM lines l JOIN oe_item it ON it.i_id = l.i_id),
locked AS MATERIALIZED (
  SELECT s_w_id, s_i_id, s_dist_info FROM oe_stock s JOIN (SELECT DISTINCT supply_w_id, i_id FROM items) wanted
    ON s_w_id = wanted.supply_w_id AND s_i_id = wanted.i_id
  ORDER BY s_w_id, s_i_id FOR UPDATE OF s),
taken AS (
  UPDATE oe_stock s SET s_quantity = CASE WHEN s_quantity - t.qty >= 10 THEN s_quantity - t.qty ELSE s_quantity - t.qty + 91 END,
                        s_ytd = s_ytd + t.qty, s_order_cnt = s_order_cnt + t.lines, s_remote_cnt = s_remote_cnt + t.remote
  FROM (SELECT supply_w_id, i_id, sum(qty) AS qty, count(*) AS lines,
               count(*) FILTER (WHERE supply_w_id <> :w_id) AS remote FROM items GROUP BY supply_w_id, i_id) t
  WHERE s.s_w_id = t.supply_w_id AND s.s_i_id = t.i_id AND (SELECT count(*) FROM locked) >= 0),
order_lines AS (
  INSERT INTO oe_order_line
  SELECT :w_id, :d_id, :o_id, i.ol_number, i.i_id, i.supply_w_id, NULL, i.qty, i.qty * i.i_price, k.s_dist_info
  FROM items i JOIN locked k ON k.s_w_id = i.supply_w_id AND k.s_i_id = i.i_id),
entered AS (
  INSERT INTO oe_orders SELECT :w_id, :d_id, :o_id, :c_id, now(), NULL, :ol_cnt,
                               CASE WHEN bool_and(supply_w_id = :w_id) THEN 1 ELSE 0 END FROM lines),
queued AS (INSERT INTO oe_new_order VALUES (:w_id, :d_id, :o_id))
SELECT count(*) AS found FROM items
\gset
\if :found = :ol_cnt
COMMIT;
\else
ROLLBACK;
\endif
