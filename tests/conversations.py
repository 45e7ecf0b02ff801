"""Realistic multi-session conversations for the collision-memory tests: two friends
chatting over weeks, in messy English and Chinese, with fillers, typos, small talk and
people changing their minds. Not hand-shaped for any rule: what a soul hears.

Each session is (ISO date, turns); a turn is (speaker, text).
"""

from __future__ import annotations

Session = tuple[str, list[tuple[str, str]]]

FRIENDS: list[Session] = [
    (
        "2024-03-02T18:10:00",
        [
            ("Lena", "hey Tomas!! long time no see, how have you been?"),
            ("Tomas", "Hey Lena! good good, swamped with work lol. whats new with you?"),
            ("Lena", "finally signed the lease for the flat on Harbour Street, move in April 1"),
            ("Tomas", "no way, congrats!! is that the one with the tiny balcony?"),
            ("Lena", "yes haha, the balcony fits exactly one chair and a tomato plant"),
            ("Tomas", "love it. are you getting a moving company or doing it yourself?"),
            ("Lena", "hmm not sure yet, the movers quoted 900 euros which is kinda insane"),
            ("Tomas", "I can borrow my cousin's van on weekends if that helps"),
            ("Lena", "omg that would be amazing, thank you!!"),
            ("Tomas", "also I started a cooking club with 3 people from work, we meet Thursdays"),
            ("Lena", "what do you cook?"),
            ("Tomas", "last week we made ramen from scratch, the broth took six hours"),
            ("Lena", "six hours?? respect. I burn pasta lol"),
            ("Tomas", "haha you should join sometime, we're doing dumplings next"),
            ("Lena", "I'm not sure, could you remind me when it is?"),
            ("Tomas", "Thursdays at 7, at Marco's place"),
            ("Lena", "ok ok I'll think about it"),
            ("Tomas", "btw the job offer from the Berlin startup came through"),
            ("Lena", "wait what, are you taking it??"),
            ("Tomas", "I think so. the salary is better and the team works on climate data"),
            ("Lena", "should you really move to Berlin though? what about your mum?"),
            ("Tomas", "yeah that's the hard part, I haven't decided how to tell her"),
        ],
    ),
    (
        "2024-03-20T20:30:00",
        [
            ("Tomas", "Lena! I turned down the Berlin job, so no moving to Berlin after all"),
            ("Lena", "whaaat, why?"),
            ("Tomas", "my mum got sick and I don't want to be 1000 km away right now"),
            ("Lena", "oh no, I'm so sorry. how is she doing?"),
            ("Tomas", "better, the doctors say it's not serious, but it scared me"),
            ("Lena", "makes sense. family first"),
            ("Tomas", "the startup said I can work remotely from here instead, starting in May"),
            ("Lena", "that's actually the best of both worlds!"),
            ("Lena", "update on the move: the movers dropped their price to 600 euros"),
            ("Tomas", "still a lot, the van offer stands"),
            ("Lena", "I know, but my back can't carry the piano, so movers it is"),
            ("Tomas", "fair enough. the piano definately needs pros"),
            ("Lena", "also the landlord said no pets allowed in the flat, so no dog for now :("),
            ("Tomas", "boo. you've wanted a dog forever"),
            ("Lena", "maybe next year when I find a place with a garden"),
            ("Tomas", "we did dumplings at the cooking club, half of them exploded haha"),
            ("Lena", "lol. did the filling fall out?"),
            ("Tomas", "the dough was too thin, Marco says we need to rest it an hour"),
            ("Lena", "我上周试着包饺子\uff0c结果全破了"),
            ("Tomas", "哈哈 面团要醒一个小时才行"),
            ("Lena", "好吧 下次试试"),
        ],
    ),
    (
        "2024-04-25T19:00:00",
        [
            ("Lena", "hi!! I'm in the new flat, boxes everywhere"),
            ("Tomas", "yay! how did the move go?"),
            ("Lena", "the movers were great, the piano survived, but it cost 650 in the end"),
            ("Tomas", "not bad. how's the balcony?"),
            ("Lena", "the tomato plant is alive lol"),
            ("Tomas", "remote work started early btw, the team is really nice"),
            ("Lena", "so you're staying here for good?"),
            ("Tomas", "for now yes. I'll visit Berlin once a month for planning meetings"),
            ("Lena", "and your mum?"),
            ("Tomas", "she's fully recovered, she even came to the cooking club last week"),
            ("Lena", "aww that's so sweet"),
            ("Tomas", "the club is growing, we're eight people now and we moved to Sundays"),
            ("Lena", "Sundays work way better for me, I might actually come"),
            ("Tomas", "we're doing a paella night on May 12"),
            ("Lena", "count me in! should I bring anything?"),
            ("Tomas", "bring a dessert maybe? nothing with nuts, Marco is allergic"),
            ("Lena", "noted, no nuts. I'll try a lemon tart"),
            ("Lena", "oh and the landlord changed his mind, small dogs are fine now!"),
            ("Tomas", "no way!! so the dog is back on?"),
            ("Lena", "yes, I'm visiting the shelter on Saturday to meet a beagle called Pepper"),
            ("Tomas", "周末我可以陪你去收容所"),
            ("Lena", "太好了 谢谢\uff01"),
        ],
    ),
    (
        "2024-05-30T18:45:00",
        [
            ("Lena", "what should I cook for dinner"),
            ("Tomas", "lol didn't you learn anything at paella night?"),
            ("Lena", "the lemon tart was a disaster, the crust never set"),
            ("Tomas", "haha it still tasted good"),
            ("Lena", "Pepper ate half of it when I wasn't looking"),
            ("Tomas", "that beagle is a menace"),
            ("Lena", "she's the best thing that happened this year honestly"),
            ("Tomas", "the Berlin team wants me there for a whole week in June"),
            ("Lena", "are you ok with that? with your mum and all?"),
            ("Tomas", "yeah she's totally fine now, she told me to go"),
            ("Lena", "then go! I'll keep the cooking club alive"),
            ("Tomas", "deal. Marco's making the ramen broth again, six hours as usual"),
        ],
    ),
]


def turns(sessions: list[Session] = FRIENDS) -> list[tuple[str, str, str, str]]:
    """Every turn as (session id, ISO date, speaker, text), in order."""
    return [
        (f"s{index}", when, speaker, text)
        for index, (when, said) in enumerate(sessions, 1)
        for speaker, text in said
    ]
