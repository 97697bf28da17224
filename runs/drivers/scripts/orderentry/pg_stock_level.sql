-- Order-entry workload (derived from TPC-C): stock-level, read only: the items of a district's last 20 orders whose
-- stock is below a threshold (10-20).
\set w_id CASE WHEN :home = 1 THEN :client_id % :warehouses + 1 ELSE random(1, :warehouses) END
\set d_id random(1, 10)
\set threshold random(10, 20)
BEGIN;
SELECT count(DISTINCT s_i_id) FROM oe_district, oe_order_line, oe_stock
  WHERE d_w_id = :w_id AND d_id = :d_id AND ol_w_id = :w_id AND ol_d_id = :d_id
    AND ol_o_id < d_next_o_id AND ol_o_id >= d_next_o_id - 20
    AND s_w_id = :w_id AND s_i_id = ol_i_id AND s_quantity < :threshold;
COMMIT;
