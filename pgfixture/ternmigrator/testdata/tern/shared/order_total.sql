CREATE FUNCTION order_total(o orders) RETURNS numeric LANGUAGE sql AS $$ SELECT o.total $$;
