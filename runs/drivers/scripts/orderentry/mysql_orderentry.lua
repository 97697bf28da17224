#!/usr/bin/env sysbench
-- Order-entry workload, derived from TPC-C (not comparable with audited TPC-C results), for MySQL and MariaDB
-- through sysbench 1.0: the same schema (oe_ tables), load and five transactions as the PostgreSQL scripts
-- (runs/drivers/scripts/orderentry/pg_*.sql; runs/drivers/orderentry.py says what they are). Each transaction is one
-- transaction; the mix 45/43/4/4/4; 1 % of new-orders roll back; 1 % of order lines and 15 % of payments remote when
-- there is more than one warehouse. A deadlock or lock wait timeout (sysbench's --mysql-ignore-errors default:
-- 1213, 1020, 1205) rolls the transaction back and runs it again, counted as a retry of its type. Each thread prints
-- its counts per type when it ends ("orderentry thread ...").
--   prepare: one thread per warehouse (--threads <= --warehouses), the schema and items by thread 0 first
--   run:     --warehouses, --home (1: each thread keeps warehouse (tid mod W) + 1)
--   cleanup: drops the oe_ tables

sysbench.cmdline.options = {
  warehouses = {"Warehouses", 1},
  home = {"1: each thread keeps its home warehouse", 0},
}

local SYLLABLES = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}
local TYPES = {"new_order", "payment", "order_status", "delivery", "stock_level"}
local WEIGHTS = {45, 43, 4, 4, 4}
local TABLES = "oe_order_line, oe_new_order, oe_orders, oe_history, oe_customer, oe_district, oe_stock, oe_item, oe_warehouse"

local function rand(a, b) return sysbench.rand.uniform(a, b) end
local function nurand(a, x, y, c) return ((bit.bor(rand(0, a), rand(x, y)) + c) % (y - x + 1)) + x end
local function last_name(n)
  return SYLLABLES[math.floor(n / 100) + 1] .. SYLLABLES[math.floor(n / 10) % 10 + 1] .. SYLLABLES[n % 10 + 1]
end
local function one(con, sql)
  local rs = con:query(sql)
  if not rs or rs.nrows == 0 then return nil end  -- (fetching from an empty set makes sysbench print an alert)
  return rs:fetch_row()
end

local SCHEMA = {
  "DROP TABLE IF EXISTS " .. TABLES,
  [[CREATE TABLE oe_warehouse (w_id int PRIMARY KEY, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
    w_city varchar(20), w_state char(2), w_zip char(9), w_tax decimal(4, 4), w_ytd decimal(12, 2)) ENGINE=InnoDB]],
  [[CREATE TABLE oe_district (d_w_id int, d_id int, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
    d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4, 4), d_ytd decimal(12, 2), d_next_o_id int,
    PRIMARY KEY (d_w_id, d_id)) ENGINE=InnoDB]],
  [[CREATE TABLE oe_customer (c_w_id int, c_d_id int, c_id int, c_first varchar(16), c_middle char(2), c_last varchar(16),
    c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16),
    c_since datetime, c_credit char(2), c_credit_lim decimal(12, 2), c_discount decimal(4, 4), c_balance decimal(12, 2),
    c_ytd_payment decimal(12, 2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500),
    PRIMARY KEY (c_w_id, c_d_id, c_id), KEY oe_customer_name (c_w_id, c_d_id, c_last, c_first)) ENGINE=InnoDB]],
  [[CREATE TABLE oe_history (h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date datetime,
    h_amount decimal(6, 2), h_data varchar(24)) ENGINE=InnoDB]],
  [[CREATE TABLE oe_orders (o_w_id int, o_d_id int, o_id int, o_c_id int, o_entry_d datetime, o_carrier_id int,
    o_ol_cnt int, o_all_local int, PRIMARY KEY (o_w_id, o_d_id, o_id), KEY oe_orders_customer (o_w_id, o_d_id, o_c_id, o_id))
    ENGINE=InnoDB]],
  "CREATE TABLE oe_new_order (no_w_id int, no_d_id int, no_o_id int, PRIMARY KEY (no_w_id, no_d_id, no_o_id)) ENGINE=InnoDB",
  [[CREATE TABLE oe_order_line (ol_w_id int, ol_d_id int, ol_o_id int, ol_number int, ol_i_id int, ol_supply_w_id int,
    ol_delivery_d datetime, ol_quantity int, ol_amount decimal(6, 2), ol_dist_info char(24),
    PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) ENGINE=InnoDB]],
  [[CREATE TABLE oe_item (i_id int PRIMARY KEY, i_im_id int, i_name varchar(24), i_price decimal(5, 2), i_data varchar(50))
    ENGINE=InnoDB]],
  [[CREATE TABLE oe_stock (s_w_id int, s_i_id int, s_quantity int, s_dist_info char(24), s_ytd int, s_order_cnt int,
    s_remote_cnt int, s_data varchar(50), PRIMARY KEY (s_w_id, s_i_id)) ENGINE=InnoDB]],
}

-- Rows made by SQL, n from a recursive sequence (MySQL 8 and MariaDB 10.2+; MySQL's recursion depth raised first).
local function seq(n) return string.format("WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < %d) ", n) end

local function load_items(con)
  con:query("INSERT INTO oe_item " .. seq(100000) .. [[SELECT n, 1 + floor(rand() * 10000), left(md5(n), 14 + n % 11),
    1 + rand() * 99, left(concat(md5(rand()), md5(rand())), 26 + n % 25) FROM seq]])
end

local function load_warehouse(con, w)
  con:query("BEGIN")
  con:query(string.format([[INSERT INTO oe_warehouse VALUES (%d, 'wh-%d', 'street one', 'street two', 'city', 'ST',
    '123411111', rand() * 0.2, 300000.00)]], w, w))
  con:query("INSERT INTO oe_district " .. seq(10) .. string.format([[SELECT %d, n, concat('dist-', n), 'street one', 'street two',
    'city', 'ST', '123411111', rand() * 0.2, 30000.00, 3001 FROM seq]], w))
  -- customers: d = (n - 1) div 3000 + 1, c = (n - 1) mod 3000 + 1; last names: c - 1 for c <= 1000, else NURand.
  local names = {}
  for i = 0, 999 do names[#names + 1] = "'" .. last_name(i) .. "'" end
  con:query("INSERT INTO oe_customer " .. seq(30000) .. string.format([[SELECT %d, (n - 1) DIV 3000 + 1, (n - 1) %% 3000 + 1,
    left(md5(rand()), 8 + n %% 9), 'OE', ELT(1 + CASE WHEN (n - 1) %% 3000 < 1000 THEN (n - 1) %% 3000
      ELSE ((floor(rand() * 256) | floor(rand() * 1000)) + 157) %% 1000 END, %s),
    'street one', 'street two', 'city', 'ST', '123411111', '0123456789012345', now(),
    CASE WHEN rand() < 0.1 THEN 'BC' ELSE 'GC' END, 50000.00, rand() * 0.5, -10.00, 10.00, 1, 0,
    repeat(md5(rand()), 10) FROM seq]], w, table.concat(names, ",")))
  con:query("INSERT INTO oe_history " .. seq(30000) .. string.format([[SELECT (n - 1) %% 3000 + 1, (n - 1) DIV 3000 + 1, %d,
    (n - 1) DIV 3000 + 1, %d, now(), 10.00, 'loaded' FROM seq]], w, w))
  -- each district's orders: a random permutation of its customers
  con:query("INSERT INTO oe_orders " .. seq(30000) .. string.format([[SELECT %d, d, o, c, now(),
    CASE WHEN o < 2101 THEN 1 + floor(rand() * 10) END, 5 + floor(rand() * 11), 1
    FROM (SELECT (n - 1) DIV 3000 + 1 AS d, (n - 1) %% 3000 + 1 AS c,
                 row_number() OVER (PARTITION BY (n - 1) DIV 3000 ORDER BY rand()) AS o FROM seq) permuted]], w))
  con:query("INSERT INTO oe_new_order " .. seq(9000) .. string.format("SELECT %d, (n - 1) DIV 900 + 1, 2100 + (n - 1) %% 900 + 1 FROM seq", w))
  con:query("INSERT INTO oe_order_line " .. seq(15) .. string.format([[SELECT o_w_id, o_d_id, o_id, n, 1 + floor(rand() * 100000),
    o_w_id, CASE WHEN o_id < 2101 THEN o_entry_d END, 5, CASE WHEN o_id < 2101 THEN 0 ELSE 0.01 + rand() * 9999.98 END,
    left(md5(rand()), 24) FROM oe_orders JOIN seq ON n <= o_ol_cnt WHERE o_w_id = %d]], w))
  con:query("INSERT INTO oe_stock " .. seq(100000) .. string.format([[SELECT %d, n, 10 + floor(rand() * 91), left(md5(rand()), 24),
    0, 0, 0, left(concat(md5(rand()), md5(rand())), 26 + n %% 25) FROM seq]], w))
  con:query("COMMIT")
end

local function session(con)
  -- the recursive sequences go to 100,000: each server's limit raised for the session
  if string.find(one(con, "SELECT version()")[1], "MariaDB") then
    con:query("SET SESSION max_recursive_iterations = 1000000")
  else
    con:query("SET SESSION cte_max_recursion_depth = 1000000")
  end
  con:query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
end

function cmd_prepare()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  session(con)
  if sysbench.tid == 0 then
    for _, sql in ipairs(SCHEMA) do con:query(sql) end
    load_items(con)
  else
    local waited = 0
    while true do  -- the schema first (thread 0), for at most 10 minutes
      local ok, row = pcall(one, con, "SELECT count(*) FROM oe_item")
      if ok and row and tonumber(row[1]) == 100000 then break end
      if waited > 3000 then error("the schema and items were not loaded by thread 0") end
      os.execute("sleep 0.2")
      waited = waited + 1
    end
  end
  for w = sysbench.tid + 1, sysbench.opt.warehouses, sysbench.opt.threads do load_warehouse(con, w) end
end

function cmd_cleanup()
  local con = sysbench.sql.driver():connect()
  con:query("DROP TABLE IF EXISTS " .. TABLES)
end

sysbench.cmdline.commands = {
  prepare = {cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND},
  cleanup = {cmd_cleanup},
}

local con, counts, current

function thread_init()
  con = sysbench.sql.driver():connect()
  session(con)
  counts = {}
  for _, t in ipairs(TYPES) do counts[t] = {done = 0, rolled_back = 0, retried = 0} end
end

local function home_or_random()
  local W = sysbench.opt.warehouses
  if sysbench.opt.home == 1 then return sysbench.tid % W + 1 end
  return rand(1, W)
end

local function other_warehouse(w)
  local W = sysbench.opt.warehouses
  return 1 + (w + rand(0, W - 2)) % W  -- never w itself
end

local function customer_by_name(w, d, n)
  local rs = con:query(string.format([[SELECT c_id FROM oe_customer WHERE c_w_id = %d AND c_d_id = %d AND c_last = '%s'
    ORDER BY c_first]], w, d, last_name(n)))
  local ids = {}
  local row = rs:fetch_row()
  while row do ids[#ids + 1] = row[1]; row = rs:fetch_row() end
  return tonumber(ids[math.floor((#ids + 1) / 2)])
end

local function new_order()
  local w, d, c = home_or_random(), rand(1, 10), nurand(1023, 1, 3000, 259)
  local ol_cnt, bad = rand(5, 15), rand(1, 100) == 1
  local lines = {}
  for n = 1, ol_cnt do
    local supply = w
    if sysbench.opt.warehouses > 1 and rand(1, 100) == 1 then supply = other_warehouse(w) end
    local item = (bad and n == ol_cnt) and 100001 or nurand(8191, 1, 100000, 3931)
    lines[n] = {number = n, item = item, supply = supply, qty = rand(1, 10)}
  end
  con:query("BEGIN")
  one(con, string.format([[SELECT c_discount, c_last, c_credit, w_tax FROM oe_customer, oe_warehouse
    WHERE w_id = %d AND c_w_id = %d AND c_d_id = %d AND c_id = %d]], w, w, d, c))
  local o_id = tonumber(one(con, string.format("SELECT d_next_o_id FROM oe_district WHERE d_w_id = %d AND d_id = %d FOR UPDATE", w, d))[1])
  con:query(string.format("UPDATE oe_district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %d AND d_id = %d", w, d))
  local all_local = 1
  for _, l in ipairs(lines) do if l.supply ~= w then all_local = 0 end end
  con:query(string.format("INSERT INTO oe_orders VALUES (%d, %d, %d, %d, now(), NULL, %d, %d)", w, d, o_id, c, ol_cnt, all_local))
  con:query(string.format("INSERT INTO oe_new_order VALUES (%d, %d, %d)", w, d, o_id))
  -- stock rows locked in key order (no deadlock between new-orders)
  local ordered = {}
  for i, l in ipairs(lines) do ordered[i] = l end
  table.sort(ordered, function (a, b) return a.supply < b.supply or (a.supply == b.supply and a.item < b.item) end)
  for _, l in ipairs(ordered) do
    local item = one(con, string.format("SELECT i_price FROM oe_item WHERE i_id = %d", l.item))
    if not item then  -- the unused item: the whole new-order rolls back
      con:query("ROLLBACK")
      counts.new_order.rolled_back = counts.new_order.rolled_back + 1
      return
    end
    local stock = one(con, string.format("SELECT s_quantity, s_dist_info FROM oe_stock WHERE s_w_id = %d AND s_i_id = %d FOR UPDATE",
                                         l.supply, l.item))
    local q = tonumber(stock[1])
    q = (q - l.qty >= 10) and (q - l.qty) or (q - l.qty + 91)
    con:query(string.format([[UPDATE oe_stock SET s_quantity = %d, s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + %d WHERE s_w_id = %d AND s_i_id = %d]], q, l.qty, l.supply ~= w and 1 or 0, l.supply, l.item))
    con:query(string.format("INSERT INTO oe_order_line VALUES (%d, %d, %d, %d, %d, %d, NULL, %d, %s * %d, '%s')",
                            w, d, o_id, l.number, l.item, l.supply, l.qty, item[1], l.qty, stock[2]))
  end
  con:query("COMMIT")
end

local function payment()
  local w, d = home_or_random(), rand(1, 10)
  local c_w, c_d = w, d
  if sysbench.opt.warehouses > 1 and rand(1, 100) <= 15 then c_w, c_d = other_warehouse(w), rand(1, 10) end
  local by_name, c, n = rand(1, 100) <= 60, nurand(1023, 1, 3000, 259), nurand(255, 0, 999, 223)
  local amount = rand(100, 500000) / 100
  con:query("BEGIN")
  con:query(string.format("UPDATE oe_warehouse SET w_ytd = w_ytd + %.2f WHERE w_id = %d", amount, w))
  con:query(string.format("UPDATE oe_district SET d_ytd = d_ytd + %.2f WHERE d_w_id = %d AND d_id = %d", amount, w, d))
  if by_name then c = customer_by_name(c_w, c_d, n) end
  con:query(string.format([[UPDATE oe_customer SET c_balance = c_balance - %.2f, c_ytd_payment = c_ytd_payment + %.2f,
    c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d]], amount, amount, c_w, c_d, c))
  con:query(string.format("INSERT INTO oe_history VALUES (%d, %d, %d, %d, %d, now(), %.2f, 'payment')", c, c_d, c_w, d, w, amount))
  con:query("COMMIT")
end

local function order_status()
  local w, d = home_or_random(), rand(1, 10)
  con:query("BEGIN")
  local c = rand(1, 100) <= 60 and customer_by_name(w, d, nurand(255, 0, 999, 223)) or nurand(1023, 1, 3000, 259)
  one(con, string.format("SELECT c_balance, c_first, c_middle, c_last FROM oe_customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c))
  local o = one(con, string.format([[SELECT o_id, o_carrier_id, o_entry_d FROM oe_orders WHERE o_w_id = %d AND o_d_id = %d
    AND o_c_id = %d ORDER BY o_id DESC LIMIT 1]], w, d, c))
  con:query(string.format([[SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM oe_order_line
    WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d]], w, d, o[1]))
  con:query("COMMIT")
end

local function delivery()
  local w, carrier = home_or_random(), rand(1, 10)
  con:query("BEGIN")
  for d = 1, 10 do
    local row = one(con, string.format("SELECT min(no_o_id) FROM oe_new_order WHERE no_w_id = %d AND no_d_id = %d", w, d))
    local o_id = row and tonumber(row[1])
    if o_id then
      con:query(string.format("DELETE FROM oe_new_order WHERE no_w_id = %d AND no_d_id = %d AND no_o_id = %d", w, d, o_id))
      if con:query(string.format("SELECT ROW_COUNT()")):fetch_row()[1] == "1" then  -- not taken by another delivery
        local c = one(con, string.format("SELECT o_c_id FROM oe_orders WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", w, d, o_id))[1]
        con:query(string.format("UPDATE oe_orders SET o_carrier_id = %d WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", carrier, w, d, o_id))
        con:query(string.format("UPDATE oe_order_line SET ol_delivery_d = now() WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", w, d, o_id))
        local amount = one(con, string.format("SELECT sum(ol_amount) FROM oe_order_line WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", w, d, o_id))[1]
        con:query(string.format([[UPDATE oe_customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1
          WHERE c_w_id = %d AND c_d_id = %d AND c_id = %s]], amount, w, d, c))
      end
    end
  end
  con:query("COMMIT")
end

local function stock_level()
  local w, d, threshold = home_or_random(), rand(1, 10), rand(10, 20)
  con:query("BEGIN")
  con:query(string.format([[SELECT count(DISTINCT s_i_id) FROM oe_district, oe_order_line, oe_stock
    WHERE d_w_id = %d AND d_id = %d AND ol_w_id = %d AND ol_d_id = %d AND ol_o_id < d_next_o_id
      AND ol_o_id >= d_next_o_id - 20 AND s_w_id = %d AND s_i_id = ol_i_id AND s_quantity < %d]], w, d, w, d, w, threshold))
  con:query("COMMIT")
end

local RUN = {new_order = new_order, payment = payment, order_status = order_status, delivery = delivery, stock_level = stock_level}

function event()
  local pick, total = rand(1, 100), 0
  for i, t in ipairs(TYPES) do
    total = total + WEIGHTS[i]
    if pick <= total then current = t; break end
  end
  RUN[current]()
  counts[current].done = counts[current].done + 1
end

function sysbench.hooks.before_restart_event(err)
  con:query("ROLLBACK")
  if current then counts[current].retried = counts[current].retried + 1 end
end

function thread_done()
  local parts = {}
  for _, t in ipairs(TYPES) do
    parts[#parts + 1] = string.format("%s=%d/%d/%d", t, counts[t].done, counts[t].rolled_back, counts[t].retried)
  end
  io.write(string.format("orderentry thread %d %s\n", sysbench.tid, table.concat(parts, " ")))  -- one write a line
  con:disconnect()
end
