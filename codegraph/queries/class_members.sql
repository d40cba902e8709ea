-- A class's whole scope, inherited members included (name-mangled members of other classes left
-- out: the class cannot reach them): for messages about the class itself (a method without
-- self, an attribute hiding a method, a bad super() call). $owner: class qualname; $name: the
-- name the message is about ('' for none); $limit
SELECT qualname, kind, name, signature, docstring, path, start_line, NULL AS import_line,
       CASE WHEN name = $name THEN 1.0 ELSE 0.9 - 0.01 * mro_position END AS score,
       CASE WHEN name = $name THEN 'exact' ELSE 'scope' END AS match,
       defined_in
FROM members_of($owner)
WHERE class = $owner
  AND NOT (starts_with(name, '__') AND NOT ends_with(name, '__') AND defined_in <> $owner)
ORDER BY score DESC, mro_position, kind = 'instance_attribute', name
LIMIT $limit;
