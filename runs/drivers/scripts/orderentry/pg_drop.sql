-- Order-entry workload (derived from TPC-C): its tables dropped (the run's cleanup).
DROP TABLE IF EXISTS oe_order_line, oe_new_order, oe_orders, oe_history, oe_customer, oe_district, oe_stock, oe_item,
  oe_warehouse;
