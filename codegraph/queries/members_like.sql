-- no-member on a class or instance: the members the class really has, inherited ones
-- included, nearest $name first. $owner: class qualname or simple name; $name; $limit
SELECT qualname, kind, name, signature, docstring, path, start_line, NULL AS import_line,
       CASE WHEN name = $name THEN 1.0 ELSE jaro_winkler_similarity(lower(name), lower($name)) END AS score,
       CASE WHEN name = $name THEN 'exact' ELSE 'fuzzy' END AS match,
       defined_in
FROM members_of($owner)
WHERE jaro_winkler_similarity(lower(name), lower($name)) >= 0.7 OR name = $name
ORDER BY score DESC, mro_position, qualname
LIMIT $limit;
