// A tiny academy written in the format of the official CypherTurn graphs
// (data/graphs/<graph>/data.cypher): a CREATE block with variables, then
// ;-separated MERGE ... SET and MATCH ... CREATE statements.

CREATE (h1:House {name: 'Emberkeep', element: 'Fire', founded_year: 1150})
CREATE (h2:House {name: 'Tide\'s Crest', element: "Water", founded_year: 1152})
/* two professors, one without a tenure year */
CREATE (p1:Professor {name: 'Archmage O\'Dell', subject: 'Pyromancy', tenure_year: 1285}),
       (p2:Professor {name: 'Lady Vey; the Elder', subject: 'Hydromancy'})
CREATE (s1:Student {name: 'Ada // not a comment', year: 2, enrolled_on: date('1325-09-01')})
CREATE (s2:Student {name: "Bram \"the Quiet\"", year: 5, enrolled_on: date('1322-09-01')})
CREATE (p1)-[:HEADS_HOUSE]->(h1), (p2)-[:HEADS_HOUSE {since_year: -12}]->(h2)
CREATE (s1)-[:BELONGS_TO_HOUSE]->(h1)<-[:BELONGS_TO_HOUSE]-(s2);

MERGE (c:Course {name: 'Basic Flames'}) SET c.level = 'Beginner', c.credits = 3;
MERGE (c:Course {name: 'Basic Flames'}) SET c.credits = 4;
MERGE (c:Course {name: 'Tides, Advanced'}) SET c.level = 'Advanced', c.credits = 5;

MATCH (a:Professor {name: 'Archmage O\'Dell'}), (b:Course {name: 'Basic Flames'}) CREATE (a)-[:TEACHES]->(b);
MATCH (a:Professor {name: 'Lady Vey; the Elder'}), (b:Course {name: 'Tides, Advanced'}) CREATE (a)-[:TEACHES]->(b);
MATCH (s:Student {name: 'Ada // not a comment'}), (c:Course {name: 'Basic Flames'}) CREATE (s)-[:ENROLLED_IN {grade: 'A'}]->(c);
MATCH (s:Student {year: 5}), (c:Course) MERGE (s)-[:ENROLLED_IN {grade: 'B'}]->(c);
MATCH (s:Student {year: 5}), (c:Course) MERGE (s)-[:ENROLLED_IN {grade: 'B'}]->(c);
