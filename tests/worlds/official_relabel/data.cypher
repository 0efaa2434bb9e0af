
CREATE (k1:Kingdom {name: 'Atlantea', depth_meters: 3500, population: 280000})
CREATE (k2:Kingdom {name: 'Pacifica', depth_meters: 5200, population: 150000})

CREATE (cr1:Creature {name: 'Giant Octopus', size: 'Large', temperament: 'Curious', danger_level: 4})
CREATE (cr2:Creature {name: 'Sea Dragon', size: 'Huge', temperament: 'Aggressive', danger_level: 8})

CREATE (cit1:Citizen {name: 'Marina Deepcurrent', species: 'Merfolk', occupation: 'Ambassador', age: 145})
CREATE (cit2:Citizen {name: 'Ilara Starpool', species: 'Aquatic Elf', occupation: 'Astrologer', age: 415})
CREATE (cit3:Citizen {name: 'Neptune Stormtide', species: 'Merfolk', occupation: 'King', age: 320})

CREATE (cit1)-[:TAMES]->(cr1)
CREATE (cit3)-[:TAMES]->(cr2)
CREATE (cit2)-[:TAMES]->(cr9);

MATCH (c:Citizen {name: 'Neptune Stormtide'}), (k:Kingdom {name: 'Pacifica'}) CREATE (c)-[:SERVES]->(k);
MATCH (c:Citizen {name: 'Marina Deepcurrent'}), (k:Kingdom {name: 'Atlantea'}) CREATE (c)-[:SERVES]->(k);

MATCH (c:Citizen {name: 'Ilara Starpool'})-[:TAMES]->(n) WHERE size(labels(n))=0
SET n:Creature, n.name = 'Abyssal Specter', n.temperament = 'Elusive', n.danger_level = 6, n.size = 'large';
