-- no-member on a class or instance: the members the class really has, inherited ones
-- included (name-mangled members of its bases left out: unreachable), nearest $name first; a
-- small class (40 members or fewer) comes whole, since the real name need not be a spelling
-- neighbour of the invented one. $owner: class qualname or simple name; $name; $limit;
-- $local: member names the candidate itself defines in that class (a class being written has
-- them only in the candidate, not yet in the graph)
WITH found AS (
    SELECT qualname, kind, name, signature, docstring, path, start_line, mro_position, defined_in
    FROM members_of($owner)
    WHERE NOT (starts_with(name, '__') AND NOT ends_with(name, '__') AND mro_position > 0)
    UNION ALL
    SELECT $owner || '.' || n, 'member', n, NULL, NULL, NULL, NULL, -1, $owner
    FROM unnest(CAST($local AS VARCHAR[])) AS t(n)
    WHERE n NOT IN (SELECT name FROM members_of($owner))
)
SELECT qualname, kind, name, signature, docstring, path, start_line, NULL AS import_line,
       CASE WHEN name = $name THEN 1.0 ELSE jaro_winkler_similarity(lower(name), lower($name)) END AS score,
       CASE WHEN name = $name THEN 'exact' WHEN jaro_winkler_similarity(lower(name), lower($name)) >= 0.7
            THEN 'fuzzy' ELSE 'scope' END AS match,
       defined_in
FROM found
WHERE jaro_winkler_similarity(lower(name), lower($name)) >= 0.7 OR name = $name
   OR (SELECT count(*) FROM found) <= 40
ORDER BY score DESC, mro_position, qualname
LIMIT $limit;
