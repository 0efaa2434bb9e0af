// The small graph every EX/PSJS case runs on (hand-computed expectations refer to it).
// 4 Person, 2 City; 4 KNOWS, 3 LIVES_IN. Carol has no score; Dave lives nowhere.
CREATE (alice:Person {name: 'Alice', age: 30, score: 1.5}),
       (bob:Person {name: 'Bob', age: 25, score: 2.0}),
       (carol:Person {name: 'Carol', age: 35}),
       (dave:Person {name: 'Dave', age: 30, score: 2.0}),
       (paris:City {name: 'Paris'}),
       (rome:City {name: 'Rome'}),
       (alice)-[:KNOWS {since: 2010}]->(bob),
       (bob)-[:KNOWS {since: 2015}]->(carol),
       (alice)-[:KNOWS {since: 2020}]->(carol),
       (carol)-[:KNOWS {since: 2021}]->(dave),
       (alice)-[:LIVES_IN]->(paris),
       (bob)-[:LIVES_IN]->(paris),
       (carol)-[:LIVES_IN]->(rome)
