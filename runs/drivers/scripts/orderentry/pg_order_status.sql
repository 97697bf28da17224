-- Order-entry workload (derived from TPC-C): order-status, read only. 60 % name the customer by last name.
\set w_id CASE WHEN :home = 1 THEN :client_id % :warehouses + 1 ELSE random(1, :warehouses) END
\set d_id random(1, 10)
\set by_name random(1, 100)
\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\set c_n ((random(0, 255) | random(0, 999)) + 223) % 1000
BEGIN;
\if :by_name <= 60
WITH named AS (
  SELECT c_id, row_number() OVER (ORDER BY c_first) AS position, count(*) OVER () AS total FROM oe_customer
  WHERE c_w_id = :w_id AND c_d_id = :d_id
    AND c_last = (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:c_n / 100 + 1]
              || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:c_n / 10 % 10 + 1]
              || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:c_n % 10 + 1])
SELECT c_id FROM named WHERE position = (total + 1) / 2
\gset
\endif
SELECT c_balance, c_first, c_middle, c_last FROM oe_customer WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
SELECT o_id, o_carrier_id, o_entry_d FROM oe_orders WHERE o_w_id = :w_id AND o_d_id = :d_id AND o_c_id = :c_id
  ORDER BY o_id DESC LIMIT 1
\gset
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM oe_order_line
  WHERE ol_w_id = :w_id AND ol_d_id = :d_id AND ol_o_id = :o_id;
COMMIT;
