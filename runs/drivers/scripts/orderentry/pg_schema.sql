-- Order-entry workload, derived from TPC-C (not comparable with audited TPC-C results): the schema, and the item
-- table (shared by every warehouse). Run once by pgbench (-c 1 -t 1) before pg_load.sql loads the warehouses.
-- Tables are prefixed oe_ so that cleaning up never touches a table of the target's own.
DROP TABLE IF EXISTS oe_order_line, oe_new_order, oe_orders, oe_history, oe_customer, oe_district, oe_stock, oe_item,
  oe_warehouse;
CREATE TABLE oe_warehouse (w_id int PRIMARY KEY, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
  w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4, 4), w_ytd numeric(12, 2));
CREATE TABLE oe_district (d_w_id int, d_id int, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
  d_city varchar(20), d_state char(2), d_zip char(9), d_tax numeric(4, 4), d_ytd numeric(12, 2), d_next_o_id int,
  PRIMARY KEY (d_w_id, d_id));
CREATE TABLE oe_customer (c_w_id int, c_d_id int, c_id int, c_first varchar(16), c_middle char(2), c_last varchar(16),
  c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16),
  c_since timestamp, c_credit char(2), c_credit_lim numeric(12, 2), c_discount numeric(4, 4), c_balance numeric(12, 2),
  c_ytd_payment numeric(12, 2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id));
CREATE TABLE oe_history (h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date timestamp,
  h_amount numeric(6, 2), h_data varchar(24));
CREATE TABLE oe_orders (o_w_id int, o_d_id int, o_id int, o_c_id int, o_entry_d timestamp, o_carrier_id int,
  o_ol_cnt int, o_all_local int, PRIMARY KEY (o_w_id, o_d_id, o_id));
CREATE TABLE oe_new_order (no_w_id int, no_d_id int, no_o_id int, PRIMARY KEY (no_w_id, no_d_id, no_o_id));
CREATE TABLE oe_order_line (ol_w_id int, ol_d_id int, ol_o_id int, ol_number int, ol_i_id int, ol_supply_w_id int,
  ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6, 2), ol_dist_info char(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number));
CREATE TABLE oe_item (i_id int PRIMARY KEY, i_im_id int, i_name varchar(24), i_price numeric(5, 2), i_data varchar(50));
-- The ten s_dist_xx columns of the specification are one s_dist_info here (the order line copies it).
CREATE TABLE oe_stock (s_w_id int, s_i_id int, s_quantity int, s_dist_info char(24), s_ytd int, s_order_cnt int,
  s_remote_cnt int, s_data varchar(50), PRIMARY KEY (s_w_id, s_i_id));
INSERT INTO oe_item
  SELECT i, 1 + floor(random() * 10000)::int, left(md5(i::text), 14 + i % 11), (1 + random() * 99)::numeric(5, 2),
         left(md5(random()::text) || md5(random()::text), 26 + i % 25)
  FROM generate_series(1, 100000) i;
