-- Order-entry workload (derived from TPC-C): the secondary indexes the transactions read by, once the warehouses are
-- loaded, and the planner's statistics.
CREATE INDEX oe_customer_name ON oe_customer (c_w_id, c_d_id, c_last, c_first);
CREATE INDEX oe_orders_customer ON oe_orders (o_w_id, o_d_id, o_c_id, o_id);
ANALYZE oe_warehouse, oe_district, oe_customer, oe_history, oe_orders, oe_new_order, oe_order_line, oe_item, oe_stock;
