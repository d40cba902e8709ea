-- Object errors (not callable, not iterable, unsubscriptable) and redefinitions: what the
-- expression really is (kind, signature, annotation, value), and definitions of the same name
-- beside it. $qualname, $limit
SELECT s.qualname, s.kind, s.name,
       coalesce(s.signature, ': ' || coalesce(m.annotation, g.annotation)) AS signature,
       s.docstring, s.path, s.start_line, NULL AS import_line, 1.0 AS score, 'exact' AS match,
       coalesce(m.value, g.value) AS value
FROM all_symbols s
LEFT JOIN all_members m ON m.id = s.id
LEFT JOIN all_globals g ON g.id = s.id
WHERE s.qualname = $qualname
LIMIT $limit;
