-- Order-entry workload (derived from TPC-C): payment, one transaction. 15 % of payments by a customer of another
-- warehouse (when there is one, any district of it); 60 % name the customer by last name (the middle one of those
-- sorted by first name), 40 % by number.
\set w_id CASE WHEN :home = 1 THEN :client_id % :warehouses + 1 ELSE random(1, :warehouses) END
\set d_id random(1, 10)
\set remote CASE WHEN :warehouses > 1 AND random(1, 100) <= 15 THEN 1 ELSE 0 END
\set c_w_id CASE WHEN :remote = 1 THEN 1 + (:w_id + random(0, greatest(:warehouses - 2, 0))) % :warehouses ELSE :w_id END
\set c_d_id CASE WHEN :remote = 1 THEN random(1, 10) ELSE :d_id END
\set by_name random(1, 100)
\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\set c_n ((random(0, 255) | random(0, 999)) + 223) % 1000
\set cents random(100, 500000)
BEGIN;
UPDATE oe_warehouse SET w_ytd = w_ytd + :cents / 100.0 WHERE w_id = :w_id;
UPDATE oe_district SET d_ytd = d_ytd + :cents / 100.0 WHERE d_w_id = :w_id AND d_id = :d_id;
\if :by_name <= 60
WITH named AS (
  SELECT c_id, row_number() OVER (ORDER BY c_first) AS position, count(*) OVER () AS total FROM oe_customer
  WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id
    AND c_last = (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:c_n / 100 + 1]
              || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:c_n / 10 % 10 + 1]
              || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:c_n % 10 + 1])
SELECT c_id FROM named WHERE position = (total + 1) / 2
\gset
\endif
UPDATE oe_customer SET c_balance = c_balance - :cents / 100.0, c_ytd_payment = c_ytd_payment + :cents / 100.0,
                       c_payment_cnt = c_payment_cnt + 1
  WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id AND c_id = :c_id;
INSERT INTO oe_history VALUES (:c_id, :c_d_id, :c_w_id, :d_id, :w_id, now(), :cents / 100.0, 'payment');
COMMIT;
