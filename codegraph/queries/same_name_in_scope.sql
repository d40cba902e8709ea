-- function-redefined: the definitions named $name that already exist in module or class $scope.
-- $scope, $name, $limit
SELECT qualname, kind, name, signature, docstring, path, start_line, NULL AS import_line,
       1.0 AS score, 'exact' AS match
FROM symbols
WHERE name = $name AND (class_qualname = $scope OR (class_qualname IS NULL AND module = $scope))
ORDER BY start_line
LIMIT $limit;
