-- raising or catching something that is not an exception: the project's exception classes
-- (deriving, at some depth, from a built-in exception), nearest $name first. $name; $limit
WITH RECURSIVE exc(qualname, depth) AS (
    SELECT class_qualname, 1 FROM inheritance
    WHERE resolved_base LIKE 'builtins.%' AND (resolved_base LIKE '%Error' OR resolved_base LIKE '%Exception'
          OR resolved_base LIKE '%Warning' OR resolved_base IN ('builtins.BaseException', 'builtins.KeyboardInterrupt'))
    UNION
    SELECT i.class_qualname, e.depth + 1 FROM inheritance i JOIN exc e ON i.resolved_base = e.qualname
    WHERE e.depth < 16
)
SELECT DISTINCT c.qualname, 'class' AS kind, c.name, '(' || array_to_string(c.bases, ', ') || ')' AS signature,
       c.docstring, c.path, c.start_line,
       CASE WHEN c.scope_qualname = c.module THEN 'from ' || c.module || ' import ' || c.name END AS import_line,
       CASE WHEN c.name = $name THEN 1.0 ELSE jaro_winkler_similarity(lower(c.name), lower($name)) END AS score,
       CASE WHEN c.name = $name THEN 'exact' ELSE 'fuzzy' END AS match
FROM exc JOIN classes c ON c.qualname = exc.qualname
ORDER BY score DESC, c.qualname
LIMIT $limit;
