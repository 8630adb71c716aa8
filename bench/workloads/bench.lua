-- CPU-bound Lua for bench/run: recursion, numeric loops, strings and tables, in the
-- proportions a small script might have. Usage: lua bench.lua [SCALE] (default 10).
local scale = tonumber(arg and arg[1]) or 10

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function loops(n)
  local s = 0.0
  for i = 1, n do
    s = s + (i % 7) * 0.5 - (i // 3)
  end
  return s
end

local function strings(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = string.format("%d:%s", i, string.rep("ab", i % 5))
  end
  local s = table.concat(parts, ",")
  local count = 0
  for word in s:gmatch("%d+:") do count = count + #word end
  return count + #s:gsub("ab", "x")
end

local function tables(n)
  local t = {}
  local x = 12345
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    t[i] = { key = x, name = "k" .. (x % 1000) }
  end
  table.sort(t, function(a, b) return a.key < b.key end)
  local index = {}
  for _, v in ipairs(t) do index[v.name] = (index[v.name] or 0) + 1 end
  local total = 0
  for _, c in pairs(index) do total = total + c end
  return total
end

local acc = 0
for _ = 1, scale do
  acc = acc + fib(20) + loops(100000) + strings(5000) + tables(5000)
end
print(string.format("lua bench x%d: %.1f", scale, acc))
