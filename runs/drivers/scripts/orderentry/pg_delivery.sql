-- Order-entry workload (derived from TPC-C): delivery, one transaction: in each of the warehouse's ten districts the
-- oldest undelivered order is delivered (its new_order row deleted, its carrier set, its lines dated, its amount put on
-- its customer's balance). A district whose oldest order another delivery took meanwhile is skipped.
\set w_id CASE WHEN :home = 1 THEN :client_id % :warehouses + 1 ELSE random(1, :warehouses) END
\set carrier random(1, 10)
BEGIN;
WITH oldest AS (SELECT no_d_id, min(no_o_id) AS o_id FROM oe_new_order WHERE no_w_id = :w_id GROUP BY no_d_id),
delivered AS (
  DELETE FROM oe_new_order n USING oldest
  WHERE n.no_w_id = :w_id AND n.no_d_id = oldest.no_d_id AND n.no_o_id = oldest.o_id RETURNING n.no_d_id, n.no_o_id),
carried AS (
  UPDATE oe_orders SET o_carrier_id = :carrier FROM delivered
  WHERE o_w_id = :w_id AND o_d_id = delivered.no_d_id AND o_id = delivered.no_o_id RETURNING o_d_id, o_id, o_c_id),
dated AS (
  UPDATE oe_order_line SET ol_delivery_d = now() FROM delivered
  WHERE ol_w_id = :w_id AND ol_d_id = delivered.no_d_id AND ol_o_id = delivered.no_o_id
  RETURNING ol_d_id, ol_o_id, ol_amount)
UPDATE oe_customer c SET c_balance = c_balance + owed.amount, c_delivery_cnt = c_delivery_cnt + 1
FROM (SELECT carried.o_d_id, carried.o_c_id, sum(dated.ol_amount) AS amount FROM carried
      JOIN dated ON dated.ol_d_id = carried.o_d_id AND dated.ol_o_id = carried.o_id
      GROUP BY carried.o_d_id, carried.o_c_id) owed
WHERE c.c_w_id = :w_id AND c.c_d_id = owed.o_d_id AND c.c_id = owed.o_c_id;
COMMIT;
