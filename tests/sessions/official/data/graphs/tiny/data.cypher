
CREATE (h1:House {name: 'Emberflame', element: 'Fire', founded_year: 1150, points: 10})
CREATE (h2:House {name: 'Tidecrest', element: 'Water', founded_year: 1152, points: 10})
CREATE (h3:House {name: 'Stoneguard', element: 'Earth', founded_year: 1148, points: 30})
CREATE (h4:House {name: 'Skywind', element: 'Air', founded_year: 1155, points: 10})

CREATE (s1:Student {name: 'Ada', year: 1, talent_score: 80})
CREATE (s2:Student {name: 'Bram', year: 2, talent_score: 65})
CREATE (s3:Student {name: 'Cato', year: 1, talent_score: 91})
CREATE (s4:Student {name: 'Dara', year: 3, talent_score: 72})
CREATE (s5:Student {name: 'Eli', year: 2, talent_score: 58})
CREATE (s6:Student {name: 'Fen', year: 1, talent_score: 77})

CREATE (s1)-[:BELONGS_TO_HOUSE]->(h1)
CREATE (s2)-[:BELONGS_TO_HOUSE]->(h1)
CREATE (s3)-[:BELONGS_TO_HOUSE]->(h2)
CREATE (s4)-[:BELONGS_TO_HOUSE]->(h3)
CREATE (s5)-[:BELONGS_TO_HOUSE]->(h4)
CREATE (s6)-[:BELONGS_TO_HOUSE]->(h4)
