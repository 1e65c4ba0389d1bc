// default_text.h -- the torch_gpt plugin's default text, used when hyperparameter `data_path` is
// not set: short plain-language passages about a harbour town, its ships and its weather, written
// for this project. Plain ASCII, with the regular phrasing (a harbour log, lists of boats, weather
// rules) that lets a small character model learn quickly. Adjacent raw string literals, joined by
// the compiler into one string.
#ifndef COHORT_PLUGINS_TORCH_GPT_DEFAULT_TEXT_H_
#define COHORT_PLUGINS_TORCH_GPT_DEFAULT_TEXT_H_

namespace torch_gpt {

inline constexpr char kDefaultText[] =
    R"text(THE TOWN OF WRENMOUTH

Wrenmouth is a small town at the mouth of a river, where the river meets the sea. The town has
one long street by the water, a stone quay, a fish market, a chapel with a green roof, and a
lighthouse on the point. About nine hundred people live in the town. Most of them work on the
boats, in the market, or in the yard where the boats are built and mended.

The harbour is shaped like a hand held open. Two stone arms reach out into the sea, and the boats
lie safe between them. When the tide is high the water comes up to the top of the steps. When the
tide is low the boats sit on the mud and lean to one side, and the children walk out to look for
crabs. Twice a day the tide comes in and twice a day it goes out again.

The people of Wrenmouth watch the sky more than they watch the clock. A fisherman looks at the
clouds before he looks at his breakfast. A baker opens the window and smells the wind. Even the
children can tell you where the wind is coming from, and what it will bring.

THE HARBOUR LOG

Every day the harbour master writes three lines in the harbour log: the wind, the sea, and the
boats. Here are some days from one year.

Monday. Wind from the west, light. Sea calm. Six boats went out at dawn and six came home by noon.
Tuesday. Wind from the west, fresh. Sea moderate. Six boats went out at dawn and five came home by
noon. The Heron came home at dusk with a torn sail.
Wednesday. Wind from the south, light. Sea calm. Seven boats went out at dawn and seven came home
by noon.
Thursday. Wind from the south, strong. Sea rough. Two boats went out at dawn and two came home
before noon. The rest stayed in the harbour.
Friday. Wind from the south west, gale. Sea very rough. No boats went out. The waves came over the
east arm of the harbour and the spray reached the market.
Saturday. Wind from the west, strong. Sea rough. No boats went out. The crews mended nets on the
quay.
Sunday. Wind from the north west, fresh. Sea moderate. Three boats went out at dawn and three came
home by noon.
Monday. Wind from the north, light. Sea calm. Eight boats went out at dawn and eight came home by
noon. A good day for fishing.
Tuesday. Wind from the north, light. Sea calm. Eight boats went out at dawn and eight came home by
noon. The market was full of fish.
Wednesday. Wind from the north east, fresh. Sea moderate. Six boats went out at dawn and six came
home by noon. The air was cold and clear.
Thursday. Wind from the east, fresh. Sea moderate. Five boats went out at dawn and five came home
by noon.
Friday. Wind from the east, strong. Sea rough. One boat went out at dawn and one came home before
noon.
Saturday. Wind from the east, light. Sea slight. Seven boats went out at dawn and seven came home
by noon.
Sunday. Wind calm. Sea calm. Fog in the morning. No boats went out until the fog lifted. Four boats
went out at noon and four came home at dusk.
)text"
    R"text(
THE BOATS OF WRENMOUTH

The Marigold is a small fishing boat with a red hull and one mast. She carries a crew of three.
She goes out for crabs and lobsters and she comes home before dark.

The Heron is a fishing boat with a grey hull and two masts. She carries a crew of four. She goes
out for herring and mackerel, and she is the fastest boat in the harbour.

The Sally Brown is an old fishing boat with a blue hull and one mast. She carries a crew of two.
She is slow but she is steady, and she has never lost a net.

The Good Hope is a large fishing boat with a black hull and two masts. She carries a crew of six.
She goes far out to sea and she may stay out for three days.

The Little Wren is a rowing boat with a white hull and no mast. She carries a crew of one. She
takes the harbour master out to the boats and brings him back again.

The Morning Star is a trading ship with a brown hull and three masts. She carries a crew of ten.
She brings coal, salt and flour to the town, and she takes away fish, wool and slate.

The Otter is a ferry with a green hull and an engine. She carries a crew of two and up to forty
people. She crosses the river six times a day when the weather is fair.

The Pilot is a small fast boat with a yellow hull and an engine. She carries a crew of two. When a
large ship comes to the harbour, the Pilot goes out to meet her and shows her the way in.

PARTS OF A SHIP

The front of a ship is the bow. The back of a ship is the stern. The left side, when you look to
the bow, is port, and the right side is starboard. The floor of a ship is the deck. The body of a
ship is the hull. The bottom of the hull is the keel. The pole that holds the sails is the mast.
The ropes that hold the mast are the stays. The wheel or the handle that turns the ship is the
helm, and the flat board under the water at the stern is the rudder.

A ship shows a red light on the port side and a green light on the starboard side. At night a
sailor who sees a red light and a green light together knows that a ship is coming straight
towards him. A sailor who sees only a red light knows that the ship is crossing from his right to
his left. A sailor who sees a white light above the others knows that the ship has an engine.

WEATHER RULES

The old sailors of Wrenmouth have many rules about the weather. Some of them are true and some of
them are only old.

When the wind comes from the west, the weather will be mild and wet.
When the wind comes from the east, the weather will be cold and dry.
When the wind comes from the north, the weather will be cold and clear.
When the wind comes from the south, the weather will be warm, and rain may follow.

When the clouds are high and thin, the weather will change within a day.
When the clouds are low and grey, rain will come before night.
When the clouds are tall and dark, a storm is near.
When there are no clouds at all, the night will be cold.

When the glass falls slowly, the weather will turn bad slowly.
When the glass falls quickly, a gale is coming soon.
When the glass rises slowly, fair weather will stay.
When the glass rises quickly, the fair weather will not last.

When the gulls fly inland, stay in the harbour.
When the swell comes before the wind, the wind will be strong.
When the sea smells of weed at the quay, the tide is low.
When the hills across the bay look near and sharp, rain is coming.
)text"
    R"text(
THE LIGHTHOUSE

The lighthouse stands on the point, at the end of a long path over the rocks. It is white, with a
red band at the top, and it is eighty feet tall. There are one hundred and twelve steps from the
door to the lamp.

The keeper of the lighthouse is a woman called Ann Tolley. Every evening, half an hour before
sunset, she climbs the steps, cleans the glass, and lights the lamp. Every morning, half an hour
after sunrise, she puts the lamp out again. The lamp turns all night, and the light shows two
flashes every ten seconds. That is how a sailor at sea knows that the light is the Wrenmouth
light and not another one.

When there is fog, Ann Tolley sounds the horn. The horn gives one long note every thirty seconds.
On a night of fog no one in the town sleeps well, but no one complains, because the horn keeps
the boats off the rocks.

Ann writes in her own log, as the harbour master does. Her log says: the time the lamp was lit,
the time it was put out, the weather in the night, and the ships she saw. On a clear night she
may see twenty ships pass. On a night of rain she may see none at all.

THE STORM

One year, late in the autumn, a great storm came to Wrenmouth. In the morning the sky was clear
and the sea was calm, but the glass was falling quickly. The harbour master looked at the glass
and then he looked at the sky. He walked along the quay and told every crew to stay in.

Most of the crews listened to him. The crew of the Good Hope did not. They had been out for two
days and they had caught very little, and they wanted to go out again. They said that the sky
was clear and the sea was calm. They went out at noon.

By the middle of the afternoon the wind had come round to the south west. By evening it was a
gale. The waves grew higher and higher, and they broke over the east arm of the harbour. The rain
came in sideways, and the people in the town closed their shutters and lit their lamps.

At the lighthouse Ann Tolley saw a light at sea. It was a red light, low on the water, and it
was moving slowly towards the rocks. She knew that it was the Good Hope. She rang the bell and
she sent a rocket up into the sky, red and bright, to tell the boat where the rocks were.

The crew of the Good Hope saw the rocket. They turned the boat away from the rocks and they ran
before the wind, all night, along the coast. In the morning the wind dropped. The Good Hope came
back into the harbour at noon, with a broken mast and a tired crew, and every person in the town
came down to the quay to meet her.

After that day the crew of the Good Hope always looked at the glass before they went out. And the
harbour master never had to tell them twice.
)text"
    R"text(
MARKET DAY

On Saturday there is a market on the quay. The stalls are set up at seven in the morning and they
are taken down at one in the afternoon. There are stalls for fish, for bread, for cheese, for
eggs, for apples, for wool and for rope.

The fish stall is the largest. It is run by the Pengelly family, who own the Heron. They sell
herring, mackerel, cod, crab and lobster. In the summer they sell more mackerel than anything
else. In the winter they sell more cod. The price of fish is written on a board in white chalk,
and it changes with the weather. When the boats have been kept in by the wind, the price goes up.
When the boats have had a good week, the price goes down.

The bread stall is run by the baker, Tom Ash. He starts work at four in the morning. He bakes
white loaves, brown loaves, and small round cakes with currants in them. By ten in the morning he
has nothing left to sell, and he goes home to sleep.

The rope stall is run by an old sailor called Jack Penrose. He was at sea for forty years, on
ships that went all round the world. Now he makes rope and nets, and he tells stories to anyone
who will stop and listen. He says that he has seen ice as tall as a church, and fish that can
fly, and a sea so still that it looked like glass. Some people believe him and some do not.

THE SEASONS

In the spring the days grow longer and the wind grows softer. The boats are painted and the nets
are mended. The first mackerel come in late in the spring, and the whole town is glad to see
them.

In the summer the sea is warm and the days are long. The boats go out early and come home late.
Visitors come on the ferry to walk on the cliffs and to swim in the bay. The market is busy and
the inn is full every night.

In the autumn the wind grows stronger and the days grow shorter. There are more days when the
boats stay in. The crews bring the small boats up onto the slip and turn them over for the
winter. The herring come in the autumn, in great shoals, and the sea at night is bright with
them.

In the winter the sea is cold and grey. The storms come one after another, and some weeks no boat
goes out at all. The crews mend their gear in the sheds by the slip, and the town waits for the
spring. But on a clear winter morning, when the wind is from the north and the sea is flat, the
boats go out again, and the town is awake before the sun.
)text"
    R"text(
THE FERRY

The Otter crosses the river six times a day. She leaves the town side at eight, at ten, and at
twelve in the morning, and at two, at four, and at six in the afternoon. She comes back from the
far side half an hour later each time. The crossing takes ten minutes when the tide is with her,
and fifteen minutes when the tide is against her.

The ferryman is called Will Hoskin. He knows every person who crosses, and he knows where each
one is going. He takes the farmers to the town on market day and he takes the children to the
school on the far side. When the river is in flood he does not cross, and he puts a sign on the
gate that says: NO FERRY TODAY.

A ticket for the ferry costs two pence for a person, four pence for a bicycle, and six pence for
a sheep. Will Hoskin says that sheep are the worst passengers, because they will not stand still
and they will not pay.

THE BOATYARD

At the top of the harbour there is a boatyard. It has a long shed, a slip that runs down into
the water, and a pile of timber that is always drying in the wind. The yard is run by two
brothers, Ned and Sam Carne. Their father ran it before them, and his father before him.

A new fishing boat takes the brothers about six months to build. First they lay the keel, which
is one long piece of oak. Then they raise the frames, which are the ribs of the boat. Then they
fix the planks to the frames, one by one, from the keel up to the top. Then they fill the seams
with cotton and tar, so that the water cannot come in. Last of all they paint the hull and step
the mast.

When a new boat is ready, the whole town comes to see her go down the slip. The owner's youngest
child breaks a bottle on the bow and says her name. Then the brothers knock away the blocks, and
the boat slides down the slip into the water, and everyone cheers. The first time a new boat goes
out to sea, the other boats go out with her, for luck.

A DAY ON THE MARIGOLD

At five in the morning the crew of the Marigold meet on the quay. There are three of them: Bess
Rowe, who owns the boat, her son Kit, and an old friend called Dan. They look at the sky, and
they look at the glass in the window of the harbour office. The wind is from the west, light, and
the glass is steady. It will be a good day.

They row out to the Marigold, climb on board, and hoist the sail. The boat leaves the harbour
with the tide. Outside the harbour arms the swell is long and slow, and the boat rises and falls
on it like a gull.

Their pots lie in a line along the edge of the rocks, each one marked by a small flag on a float.
There are forty pots. Kit hauls them up, one by one, and Dan takes out the crabs and the lobsters
and puts fresh bait in each pot. Bess holds the boat steady against the swell. It is slow, cold
work, and their hands are red and wet.

By eleven they have hauled all forty pots. They have twenty crabs and six lobsters, which is a
fair catch. They turn for home. The wind is behind them now, and the Marigold runs fast towards
the harbour. By noon they are back on the quay, and the catch is on the fish stall before one.
)text"
    R"text(
THE HARBOUR MASTER

The harbour master of Wrenmouth is called Peter Vane. His office is a small stone house at the
end of the quay, with a flagpole on the roof and a glass in the window. He keeps the log, he
collects the harbour dues, and he tells the boats where they may lie.

When a ship comes into the harbour, Peter Vane writes her name in the log, and the name of her
master, and what she carries. When a ship leaves, he writes the time, and where she is going. He
flies flags from the pole on his roof to tell the boats about the weather. One red flag means a
strong wind. Two red flags mean a gale. A black ball under the flags means that the wind will
come from the south. A black ball above the flags means that the wind will come from the north.

Peter Vane has been the harbour master for twenty years. In that time he has seen the harbour
frozen once, flooded twice, and full of herring boats more times than he can count. He says that
the sea is never the same two days running, and that is why he has never grown tired of it.

A LETTER FROM THE MORNING STAR

Dear Mother,

We came into Wrenmouth this morning, after four days at sea. The crossing was slow, with light
winds from the east, and we had fog for a day and a night. We heard the horn of the lighthouse
long before we saw the light. The pilot came out to meet us at dawn and brought us in on the
high tide.

We are unloading coal and flour today and tomorrow. On Thursday we load slate and wool, and on
Friday, if the wind is fair, we sail for the south. The master says we will be home in three
weeks.

The town is small but it is kind. The baker gave me a currant cake for nothing when I told him
this was my first voyage. An old man on the quay showed me how to splice a rope. He says that he
has sailed round the world three times, and I think that he is telling the truth.

Your loving son,
Robert
)text"
    R"text(
QUESTIONS AND ANSWERS

Where is Wrenmouth? Wrenmouth is at the mouth of a river, where the river meets the sea.
How many people live there? About nine hundred people live there.
What do they do? Most of them work on the boats, in the market, or in the boatyard.
Who keeps the lighthouse? Ann Tolley keeps the lighthouse.
Who keeps the harbour log? Peter Vane, the harbour master, keeps the harbour log.
Who runs the ferry? Will Hoskin runs the ferry.
Who builds the boats? Ned and Sam Carne build the boats.
Which boat is the fastest? The Heron is the fastest boat in the harbour.
Which boat goes farthest out to sea? The Good Hope goes farthest out to sea.
Which boat brings coal and flour? The Morning Star brings coal and flour.
What does the west wind bring? The west wind brings mild and wet weather.
What does the east wind bring? The east wind brings cold and dry weather.
What does the north wind bring? The north wind brings cold and clear weather.
What does the south wind bring? The south wind brings warm weather, and rain may follow.
What does a falling glass mean? A falling glass means that the weather will turn bad.
What does a rising glass mean? A rising glass means that the weather will be fair.
What do two red flags mean? Two red flags mean a gale.
What does the horn mean? The horn means that there is fog at sea.

THE END OF THE DAY

In the evening the boats lie still between the harbour arms. The nets are hung up to dry on the
quay, and the gulls stand on the roofs and watch them. The light on the point begins to turn:
two flashes, and then dark, and then two flashes again. In the inn by the water the crews talk
about the day, and about the wind, and about what the sky will bring tomorrow.

The harbour master writes the last line in the log. Wind from the west, light. Sea calm. All
boats home. Then he closes the book, puts out his lamp, and walks home along the quay, while the
tide comes quietly in over the mud and lifts the boats, one by one, until they float again.
)text";

}  // namespace torch_gpt

#endif  // COHORT_PLUGINS_TORCH_GPT_DEFAULT_TEXT_H_
