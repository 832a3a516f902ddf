"""Named-entity spans that name something public, not a participant's own context.

A recognizer labels "Boxing Day", "Discord", "The Office", "Hades" or "Ruby" as a person,
organisation or place; naming one identifies nobody. This module decides, per mention, from the
words around it and from lexicons that ship with installed packages (country names from
libphonenumber's locale data, programming-language names from Pygments' lexers):

* holidays ("Boxing Day", "St Patrick's Day", also when the span stops before "Day");
* widely used platforms, services, institutions and makes (:data:`PUBLIC_ENTITIES`, :data:`BRANDS`),
  unless named as an employer ("works at Slack");
* a title after a media verb ("plays Stardew Valley", "watches the great british bake off") or
  described by a media noun ("Hades is an action game", "Abbott Elementary is a mockumentary");
* a programming language in a programming context ("write Ruby and Go");
* a product with a model number or after "drives a" ("Mazda 3", "drives a Corolla"), or one
  organisation word after "a"/"an" that ends its clause ("on a Cannondale"), a product after a
  container ("a box of Velka Mints"), a team before its merchandise ("a Brask United jersey") and
  a marketplace something is sold on ("sells hats on Quorra");
* a feast named after a saint ("falls on sant jordi (23 april)") and a transport line ("take the
  Tren Ligero to");
* across all of a participant's texts: a place named as a trip's destination and never near a home,
  family or work (:func:`trip_places`; also a sight named by a landmark noun, :func:`landmarks`),
  and a one-word "person" written after an article (:func:`articled_words`).

Countries are handled by the de-identifier (:func:`country_names`): a country is not a direct
identifier (HIPAA Safe Harbor removes only places smaller than a state) unless it is a city-state,
a residence or workplace, or a name a participant's person or organisation shares.

>>> text = "She plays Stardew Valley and watches The Office."
>>> public_mention("Stardew Valley", text, 10, 24), public_mention("The Office", text, 37, 47)
(True, True)
>>> public_mention("Priya", "Ask Priya about it.", 4, 9)
False
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence

__all__ = [
    "BRANDS",
    "alternatives",
    "PUBLIC_AGENCIES",
    "PUBLIC_ENTITIES",
    "PUBLIC_SERVICES",
    "work_context",
    "country_names",
    "media_titles",
    "possessive_title_tail",
    "programming_languages",
    "public_mention",
    "residence_before",
    "trip_destination",
    "trip_places",
    "landmark_name",
    "landmarks",
    "anchored_word",
    "articled_words",
    "anchored_place",
]

#: Widely used public platforms, services, institutions and teams: naming one identifies nobody.
#: (A participant's employer named in a work context is still redacted: see :func:`public_mention`.)
PUBLIC_ENTITIES = frozenset(
    """discord slack teams zoom whatsapp instagram facebook tiktok twitter reddit youtube netflix spotify
    github gitlab linkedin google gmail outlook icloud apple iphone ipad android windows excel word
    powerpoint chatgpt amazon uber ebay paypal venmo wikipedia nhs nmc gp ni pps irs dmv medicare tv bbc
    itv hbo disney marvel hmrc dvla cra ird ato centrelink revenue cao gcse gcses a-levels sats hsc ncea
    leaving cert garmin fitbit kindle airpods playstation xbox python javascript typescript java kotlin
    swift notion aadhaar pan ssn sin tfn nino ppsn abn esta eta evisa""".split()
) | frozenset({"leaving cert", "apple watch", "apple pencil", "nintendo switch", "nmc online"})
#: National tax, social-security, health and registry agencies and the ID schemes they issue, of
#: many countries (naming the scheme or the agency identifies nobody; the number after it does).
PUBLIC_AGENCIES = frozenset(
    """belastingdienst digid bsn ggd uwv duo svb skatteverket försäkringskassan forsakringskassan bankid
    personnummer kronofogden skatteetaten nav skat mitid nemid cpr kela finanzamt elster schufa bafög
    bafoeg krankenkasse caf cpam urssaf ameli hacienda dni nie nif sepe dgt inps inail spid asl
    sat imss issste rfc curp ine infonavit cpf sus inss philhealth sss pag-ibig pagibig bir lto iras
    singpass nric fin hdb lhdn kwsp epf mykad nhis hometax uidai epfo kra nhif sha nssf ecitizen itax
    sars sassa uif firs nin bvn jamb waec gra dwp ucas ofsted uscis fafsa medicaid ohip msp hse
    mygovid mygov ndis acc kiwisaver centrelink p9 p60 p45 w-2 1099""".split()
) | frozenset(
    {
        "agencia tributaria", "seguridad social", "agenzia delle entrate", "codice fiscale",
        "receita federal", "home affairs", "universal credit", "service canada", "carte vitale",
        "france travail", "pôle emploi", "my number", "agentur für arbeit", "ghana card",
    }
)  # fmt: skip
#: Apps, shops and services used by millions across countries (ride-hailing, delivery, design,
#: fitness, supermarkets, marketplaces).
PUBLIC_SERVICES = frozenset(
    """bolt lyft grab gojek didi careem glovo deliveroo doordash rappi swiggy zomato foodpanda instacart
    figma canva procreate photoshop lightroom strava duolingo tinder bumble hinge airbnb ryanair easyjet
    revolut monzo klarna shopee lazada tokopedia coupang jumia takealot aliexpress temu shein ikea lidl
    aldi tesco sainsbury's asda carrefour mercadona esselunga conad rewe edeka woolworths coles walmart
    costco oxxo kakaotalk kakao naver line wechat alipay gcash m-pesa mpesa paytm upi pix venmo zelle
    trello asana jira miro blablacar flixbus trainline""".split()
) | frozenset({"uber eats", "just eat", "albert heijn", "pick n pay", "mercado libre", "google maps"})
#: Makes and brands whose products people name ("Honda Civic", "Apple Watch", "Mazda 3").
BRANDS = frozenset(
    """apple google samsung sony microsoft nintendo honda toyota mazda ford tesla bmw audi volkswagen vw
    nissan hyundai kia subaru volvo garmin fitbit""".split()
)
_HOLIDAY = re.compile(
    r"^(?:(?:st\.?|saint)\s+\w+(?:'s)?\s+day|\w+(?:'s)?\s+(?:day|eve)|christmas|easter|thanksgiving|"
    r"hogmanay|diwali|eid(?:\s+(?:al|ul|el)[- ]\w+)?|hanukkah|ramadan|halloween|good\s+friday|"
    r"new\s+year(?:'s)?|"
    # festivals and holidays of many countries
    r"sinterklaas|koningsdag|midsummer|midsommar|holi|chuseok|seollal|lunar\s+new\s+year|tet|"
    r"songkran|nowruz|hanami|obon|carnaval|carnival|karneval|fasching|semana\s+santa|"
    r"d[ií]a\s+de\s+(?:los\s+)?muertos|fiestas\s+patrias|sinulog|ati-atihan|simbang\s+gabi|waitangi|"
    r"anzac|matariki|juneteenth|kwanzaa|burns\s+night|bonfire\s+night|guy\s+fawkes|fastelavn|"
    r"walpurgis|ferragosto|pasqua|pasquetta|sant\s+joan|san\s+ferm[ií]n|fallas|oktoberfest|purim|"
    r"passover|pesach|rosh\s+hashanah|yom\s+kippur|sukkot|vesak|onam|pongal|durga\s+puja|navratri|"
    r"raksha\s+bandhan|mid-autumn(?:\s+festival)?|qingming|dragon\s+boat(?:\s+festival)?|"
    r"jamhuri|madaraka|mashujaa|heritage\s+day|freedom\s+day)$",
    re.IGNORECASE,
)
#: Last words of the names of public bodies, schemes and passes ("the Tenancy Tribunal", "the
#: SuperGold Card", "the Jordan Pass", "Medicare Safety Net"): a programme, not a private party.
_PROGRAMME_HEADS = frozenset(
    "tribunal ombudsman scheme card pass visa allowance benefit pension net grant".split()
)
#: Last words of job titles ("Data Analyst", "Audit Senior", "Staff Nurse").
_ROLE_NOUNS = frozenset(
    """analyst engineer manager designer developer nurse teacher consultant director officer assistant
    associate specialist coordinator administrator senior junior intern accountant auditor scientist
    technician physiotherapist barista""".split()
)
#: "as a", "as an", "works as": a role follows; "@"/"at" + a capital after a title: its employer;
#: a bar or bullet after a title: the next part of a profile headline ("Data Analyst | Python").
_ROLE_BEFORE = re.compile(r"\b(?:as|an?)\s+$", re.IGNORECASE)
_ROLE_AFTER = re.compile(r"^\s*(?:@|at\s+(?=[A-Z])|[|\u00b7\u2022](?=\s))")  # also a headline's "|"


def _private_word(words: list[str]) -> bool:
    """True when a word is a known town (libphonenumber's geocoding names) that is no country:
    "the Osaka Immigration Bureau" names the participant's town."""
    from .detectors import place_names

    towns = place_names() - country_names()
    return any(w in towns for w in words)


#: A company's legal form, last word of its name ("Ltd", "LLC", "GmbH"): alone it names no company.
_LEGAL_FORM = re.compile(
    r"(?:^|(?<=\s))(?:llc|l\.l\.c\.|llp|ltd\.?|inc\.?|plc|gmbh|pty\.?(?:\s+ltd\.?)?|corp\.?)$"
)
#: "St Patrick's" followed by " Day": the span stopped short of the holiday.
_HOLIDAY_TAIL = re.compile(r"^(?:'s)?\s+(?:day|eve)\b", re.IGNORECASE)
#: Words that make the next name an employer (a work verb, optionally with "at"/"for"/"the").
_WORK_BEFORE = re.compile(
    r"\b(?:work|works|working|worked|job|employed|employer|intern|interning|shifts?|nights|lates|"
    r"joined|joining|leaving|left|quit|dev|developer|engineer|nurse|manager|analyst|designer|role|position|"
    r"post|promotion|internship|placement)\s+"
    r"(?:at\s+|for\s+|with\s+)?(?:the\s+)?$",
    re.IGNORECASE,
)
_PUBLIC_AFTER = re.compile(
    r"^\s+(?:game|match|fixture|kick-off|kickoff|huddle|call|app|account|online|fans|season|episode|"
    r"finale|series|soundtrack|tickets|settings|cards?|line|subscription|helpline|hotline|visas?|scheme|"
    r"jerseys?|scarf|scarves|merch|merchandise|theme|themed|portal|"
    r"customer\s+(?:service|care)|service\s+cent(?:re|er))\b",
    re.IGNORECASE,
)
#: A customer's verb before a name: a bank, insurer or provider that serves the public.
_CUSTOMER_BEFORE = re.compile(r"\b(?:banks?|banked|banking|insured|subscribed)\s+(?:with|to)\s+$", re.I)
#: A sentence that ties a shop or app to someone's work: it may be their employer.
_WORK_SENTENCE = re.compile(
    r"\b(?:work|works|working|worked|job|jobs|shifts?|nights|lates|employer|employed|colleagues?|boss|"
    r"manager|intern|internship|hired|interview|interviews|recruiter|recruiters)\b",
    re.IGNORECASE,
)
#: Someone from the organisation doing something ("li from acme asked…"): the person's employer.
_FROM_BEFORE = re.compile(r"\bfrom\s+$", re.IGNORECASE)
_ACTS_AFTER = re.compile(
    r"^(?:'s)?\s+(?:asked|asks|wants|wanted|said|says|told|tells|emailed|emails|messaged|called|calls|sent|"
    r"sends|needs|needed|invited|offered|replied|is|was)\b",
    re.IGNORECASE,
)
_DETERMINER_BEFORE = re.compile(r"\b(?:the|a|an|my|our|his|her|their|your)\s+$", re.IGNORECASE)
#: Verbs whose object is a title (a show, game, book, film or album).
_MEDIA_VERB = (
    r"(?:watch|watches|watching|watched|rewatch|rewatching|binge|binges|binging|bingeing|read|reads|"
    r"reading|stream|streams|streaming|play|plays|playing|played|listen\s+to|listens\s+to|listening\s+to)"
)
_WORK_OF_ART_BEFORE = re.compile(
    rf"\b{_MEDIA_VERB}\s+(?:the\s+)?(?:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){{0,3}}\s+(?:or|and)\s+(?:the\s+)?)?$",
    re.IGNORECASE,
)
#: Nouns that say a name is a title or product ("Hades is an action game", "a sitcom like The Office").
_MEDIA_NOUN = (
    r"(?:show|series|sitcom|comedy|comedies|drama|soap|mockumentary|documentary|thriller|anime|cartoon|"
    r"film|movie|novel|book|podcast|album|song|band|game|musical|franchise|app|tool|language|framework|"
    r"satire|horror|romcom|sci-fi|fantasy|western|spin-off|reboot|sequel|prequel)"
)
_DESCRIBED_AS_MEDIA = re.compile(
    rf"^(?:'s)?\s+(?:is|was|are|were)\s+(?:(?:a|an|the)\s+)?(?:[\w'-]+\s+){{0,3}}{_MEDIA_NOUN}"
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:like|about|with|where|that|set|from|for|and|but|so)\b)",
    re.IGNORECASE,
)
#: A title after a liking verb, written with "The" ("loves The Bear", "a fan of The Office").
_LIKED_TITLE_BEFORE = re.compile(
    r"\b(?:love|loves|loved|like|likes|liked|enjoy|enjoys|enjoyed|fan\s+of|obsessed\s+with|into)\s+$",
    re.IGNORECASE,
)
#: A single-word event after a time preposition ("before Matariki", "during Ramadan").
_TIME_BEFORE = re.compile(r"\b(?:during|over|until|till|before|after)\s+$", re.IGNORECASE)
_EVENT_AFTER = re.compile(
    r"^(?:\s*(?:[,.;:!?)]|$)|\s+(?:break|holidays?|weekend|celebrations?|festivities|festival|eve)\b)",
    re.IGNORECASE,
)
#: A kind of service and "like"/"such as" before a name: an example of a public service
#: ("a remittance center like Western Union", "apps such as Pixelgram").
_SERVICE_LIKE_BEFORE = re.compile(
    r"\b(?:cent(?:er|re)s?|services?|apps?|banks?|carriers?|airlines?|platforms?|sites?|websites?|"
    r"providers?|brands?|chains?|retailers?|marketplaces?|networks?|operators?|products?|seasonings?|"
    r"sauces?|snacks?|sweets|chocolates?|beers?|wines?|spirits?|cereals?|mixe?s?)\s+(?:like|such\s+as)\s+$",
    re.IGNORECASE,
)
_MEDIA_LIKE_BEFORE = re.compile(rf"\b{_MEDIA_NOUN}s?\s+(?:like|such\s+as)\s+(?:the\s+)?$", re.IGNORECASE)
#: Words around a programming language ("write Ruby and Go", "learning Rust", "a Python script").
_CODE_CONTEXT = re.compile(
    r"\b(?:write|writes|writing|wrote|code|codes|coding|program|programming|learn|learning|language|"
    r"languages|developer|dev|backend|frontend|script|scripts|framework|compiler|systems)\b",
    re.IGNORECASE,
)
#: A make and a model number ("Mazda 3", "iPhone 15") or a vehicle after "drive(s) a".
_MODEL_NUMBER_AFTER = re.compile(r"^\s+\d{1,4}\b(?!\s*(?:am|pm|%|st|nd|rd|th)\b)", re.IGNORECASE)
#: A model code of capitals and digits after a make ("Vespa GTS300", "Panigale V4"), in its own case.
_MODEL_CODE_AFTER = re.compile(r"^\s+[A-Z]{1,3}\d{1,4}\b(?!\s+\d[A-Z]{2}\b)")  # not "M20 3ED"
_DRIVES_BEFORE = re.compile(
    r"\b(?:drive|drives|driving|drove|ride|rides|riding|rode|bought|buy|buying|lease|leasing)\s+(?:a|an|the|my|our)\s+"
    r"(?:(?:19|20)\d\d\s+)?(?:(?:old|new|used|red|blue|black|white|silver|grey|gray)\s+)?$",
    re.IGNORECASE,
)
_RESIDENCE_BEFORE = re.compile(
    r"\b(?:live|lives|living|lived|moved|moving|move|relocat\w*|based|born|raised|grew\s+up|settled|"
    r"from|resident|citizen|stationed|posted|works?|working|worked|office|headquarters|hq|home|family|"
    r"parents|grandparents|relatives|folks|mum|mom|dad|nan|gran)\s+"
    r"(?:back\s+)?(?:in|to|at|out\s+of)?\s*(?:the\s+)?$",
    re.IGNORECASE,
)
#: Countries that are one city: naming one names the city.
#: Short and official names of countries libphonenumber spells otherwise (matched in their own
#: case by NER; "us" is also a pronoun, which NER does not label).
_COUNTRY_ALIASES = frozenset(
    """us usa u.s. u.s.a. uk u.k. uae drc prc roc""".split()
) | frozenset(
    {
        "the netherlands", "the us", "the uk", "great britain", "united states of america",
        "republic of korea", "republic of ireland", "people's republic of china", "czech republic",
        "russian federation", "kingdom of saudi arabia",
    }
)  # fmt: skip
_CITY_STATES = frozenset({"singapore", "monaco", "hong kong", "macau", "macao", "gibraltar", "vatican city"})
_STOP = frozenset(
    """every each on at in with and or but for to of from so because when while after before since
    this that these those it its is was are were be been with next tonight tomorrow today
    yesterday again together instead now then also too week weekend night nights""".split()
)


@functools.lru_cache(maxsize=1)
def country_names() -> frozenset[str]:
    """Lowercased English country and territory names of libphonenumber's locale data, or empty.

    City-states ("Singapore") are left out: naming one names a city.
    """
    try:
        from phonenumbers import geocoder
        from phonenumbers.geodata.locale import LOCALE_DATA
    except ImportError:
        return frozenset()
    names = {geocoder._region_display_name(region, "en").lower() for region in LOCALE_DATA}
    names = {name for name in names if name and name not in _CITY_STATES}
    # the official long forms ("Republic of Korea") and the usual short ones ("US", "UAE")
    names |= {f"republic of {name}" for name in names if " " not in name}
    names |= _COUNTRY_ALIASES
    return frozenset(names)


@functools.lru_cache(maxsize=1)
def programming_languages() -> frozenset[str]:
    """Lowercased names of the programming languages Pygments has lexers for, or empty.

    Only names of 2+ characters that are letters (with ``+``/``#``): "ruby", "rust", "go", "c++".
    """
    try:
        from pygments.lexers import get_all_lexers
    except ImportError:
        return frozenset()
    names = set()
    for name, aliases, _, _ in get_all_lexers():
        for candidate in (name, *aliases):
            candidate = candidate.lower()
            if len(candidate) >= 2 and re.fullmatch(r"[a-z][a-z+#]*", candidate):
                names.add(candidate)
    return frozenset(names)


#: Words before a place that make it a trip's destination ("a trip to petra", "2 days in Wadi Rum",
#: "flying to Lombok", "should I visit Siurana"), not where anyone lives ("visiting" is left out:
#: "my in-laws are visiting Leeds" may name the participant's town).
_TRIP_BEFORE = re.compile(
    r"\b(?:trip|trips|holiday|holidays|vacation|getaway|honeymoon|flight|flights|fly|flying|flew|"
    r"travel|travelling|traveling|hike|hiking|trek|trekking|visit|days|nights|itinerary|tour|"
    r"layover|stopover|go\s+through|via|hostels?|hotels?|resorts?|guesthouses?|campsites?)"
    r"\s+(?:to\s+|in\s+|through\s+|for\s+|around\s+|at\s+)?"
    r"(?:the\s+)?$",
    re.IGNORECASE,
)
#: Words in a place's sentence that tie it to someone's home, family or work.
_ANCHOR_SENTENCE = re.compile(
    r"\b(?:live|lives|living|lived|moved|move|moving|based|home|address|born|raised|grew\s+up|hometown|"
    r"from|parents|mum|mom|mother|father|dad|family|work|works|working|office|stay\s+with|staying\s+with|"
    r"apartment|flat|near\s+us|neighbou?rhood|school|postcode|zip)\b",
    re.IGNORECASE,
)


def trip_destination(text: str, start: int, end: int) -> bool:
    """True when the words before a place make it a trip's destination ("a trip to Petra",
    "two days in Wadi Rum") and nothing in its sentence ties it to a home, family or work.

    >>> trip_destination("a trip to Petra in May", 10, 15), trip_destination("a trip home to Leeds", 14, 19)
    (True, False)
    """
    return bool(_TRIP_BEFORE.search(text[:start])) and not anchored_place(text, start, end)


#: Words after a place that tie it to someone's home, family or work ("Leeds to see mum").
_ANCHOR_AFTER = re.compile(
    r"^[^\w.!?;\n]*(?:[\w'-]+[^\w.!?;\n]+){0,3}?(?:home|mum|mom|mother|father|dad|parents|family|grandparents|relatives|"
    r"in-laws|friends?|work|office|school|flat|apartment|house)\b",
    re.IGNORECASE,
)
#: Before a place: its clause (commas stay inside: "lives in plagwitz, leipzig").
_CLAUSE_BEFORE = re.compile(r"[^.!?;:\n(]*$")


def _fold_same_length(text: str) -> str:
    return "".join((unicodedata.normalize("NFKD", c)[:1] or c).lower()[:1] for c in text)


def near_anchor(text: str, start: int, end: int) -> bool:
    """True when the words near a place tie it to someone's home, family or work: a residence
    before it ("lives in"), an anchor word among the five words before it in its clause ("my
    parents in Amman", "lives in plagwitz, leipzig" counts the clause "leipzig" closes), or one of
    the four words after it ("Leeds to see mum").

    >>> near_anchor("From your parents' place it's about 3 hours to Petra.", 47, 52)
    False
    >>> near_anchor("my parents in Amman", 14, 19), near_anchor("fly to Leeds to see mum", 7, 12)
    (True, True)
    """
    if _RESIDENCE_BEFORE.search(text[:start]) or re.search(r"\d\w*\s+[A-Z][\w&'-]*\s+in\s+$", text[:start]):
        return True
    clause = _CLAUSE_BEFORE.search(text[:start])
    words = re.findall(r"\S+", clause.group(0) if clause else "")[-5:]
    if _ANCHOR_SENTENCE.search(" ".join(words)):
        return True
    return bool(_ANCHOR_AFTER.match(text[end:]))


#: How often a destination is named before it counts as public: once may be a family visit the
#: text leaves unsaid ("a trip to Don Benito"); a place planned and talked about is a sight.
_TRIP_MENTIONS = 2
#: Trip verbs and nouns of other languages and the preposition after them ("viajar pra Floripa",
#: "Reise nach Wien", "reis naar Lissabon", "voyage à Lyon", "viaggio a Roma", "viaje a Cusco").
_FOREIGN_TRIP_BEFORE = re.compile(
    r"\b(?:viajar|viaje|viagem|viaggio|viaggiare|reise|reisen|reis|reizen|voyage|voyager|vacances|"
    r"vacaciones|urlaub|vakantie|f[eé]rias)\s+(?:pra|para|a|à|en|in|nach|naar|nel|al|por)\s+$",
    re.IGNORECASE,
)
#: Booking a stay or an outing somewhere ("book us something nice in Velmora", "booked a hotel in").
_BOOK_IN_BEFORE = re.compile(r"\bbook(?:s|ed|ing)?\b[^.!?;\n]{0,30}?\bin\s+(?:the\s+)?$", re.IGNORECASE)
#: A stay's length or plan after a place ("santiago 4 days itinerary?", "Velmora in 3 days:"), not
#: a working week ("Velmora 3 days a week").
_TRIP_AFTER = re.compile(
    r"^\s+(?:(?:in|for)\s+)?(?:\d{1,2}|two|three|four|five|six|seven|ten)\s+(?:days?|nights?)\b"
    r"(?!\s+(?:a|per|each|every)\s+(?:week|month))|^\s+itinerary\b",
    re.IGNORECASE,
)
#: A hike or trek is also a day out near home ("went hiking at Sabino Canyon"): no trip word here.
_OUTING_BEFORE = re.compile(
    r"\b(?:hike|hiking|trek|trekking)\s+(?:to\s+|in\s+|through\s+|at\s+)?(?:the\s+)?$", re.I
)


def trip_places(texts: Sequence[str], keys: Iterable[str]) -> set[str]:
    """The ``keys`` (folded names) that some text names as a trip's destination ("a trip to
    petra", "2 days for Wadi Rum") and no text ties to a home, family or work nearby
    (:func:`near_anchor`): public sights and destinations, which identify nobody.

    Every whole-word occurrence counts, in any case, also where no recognizer labelled it; a
    place needs :data:`_TRIP_MENTIONS` of them. Countries have their own rule (the de-identifier's).

    >>> sorted(trip_places(["a trip to Petra in May", "Petra is hot", "Petra by night"], ["petra"]))
    ['petra']
    >>> trip_places(["a trip to Leeds to see mum", "Leeds", "Leeds"], ["leeds"])
    set()
    >>> texts = ["a trip to petra?", "Petra and Wadi Rum", "Wadi Rum at night. My mum says hi"]
    >>> sorted(trip_places(texts, ["wadi rum", "petra"]))
    ['petra', 'wadi rum']
    """
    folded = [(_fold_same_length(t), t) for t in texts]
    candidates = [key for key in dict.fromkeys(keys) if len(key) >= 3 and key not in country_names()]
    result = landmarks(folded, candidates)
    for _ in range(2):  # a second pass for the places joined to a destination ("petra + wadi rum")
        joined = "|".join(re.escape(k) for k in sorted(result, key=len, reverse=True))
        after_trip = re.compile(rf"(?:{joined})\s*(?:,|\+|&|and|or)\s+$") if joined else None
        for key in candidates:
            if key not in result and _trip_place(key, folded, after_trip):
                result.add(key)
    return result


#: Nouns that end (or, in Romance languages and for mountains and lakes, start) the name of a
#: public sight, facility or route: "Odori Park", "the French Quarter", "Estadio Azteca",
#: "Mount Rinjani", "the West Highland Way". Streets, hills, valleys, islands, bridges and
#: markets are left out: they also name where people live and work.
_LANDMARK_LAST = frozenset(
    """park parks station airport museum gallery beach river way quarter square stadium arena
    cathedral basilica castle temple shrine zoo aquarium gardens falls cliffs waterfall volcano
    glacier lighthouse""".split()
)
_LANDMARK_FIRST = frozenset(
    """mount mt mt. lake estadio museo museu musee parque playa praia lagoa lago castillo castello
    catedral""".split()
)
#: "the cliffs of moher": a landmark noun and "of" before a name.
_LANDMARK_OF_BEFORE = re.compile(
    rf"\b(?:{'|'.join(sorted(_LANDMARK_LAST | _LANDMARK_FIRST - {'mt.'}))})\s+of\s+(?:the\s+)?$"
)


def landmark_name(surface: str) -> bool:
    """True for a capitalised name of two or more words that a landmark noun ends or starts
    ("Brask Park", "Mount Quorra", "Estadio Velmar"), not "Park Soyeon" nor "the park".

    >>> [landmark_name(s) for s in ("Brask Park", "Mount Quorra", "Park Soyeon", "brask park", "Tollen Hill")]
    [True, True, False, False, False]
    """
    words = surface.split()
    if len(words) < 2 or not all(
        w[:1].isupper() for w in words if w.lower() not in ("of", "the", "de", "da")
    ):
        return False
    return words[-1].lower() in _LANDMARK_LAST or words[0].lower() in _LANDMARK_FIRST


def landmarks(folded: Sequence[tuple[str, str]], keys: Iterable[str]) -> set[str]:
    """The ``keys`` (folded place names) that name a public sight, facility or route by a landmark
    noun (:data:`_LANDMARK_LAST`, :data:`_LANDMARK_FIRST`: "odori park", "mount rinjani"), or that
    every text writes after one and "of" ("the cliffs of moher"), where no occurrence is near a
    home, family or work (:func:`near_anchor`) or after a house number ("12 Fenwick Way"), and no
    other word of the name is itself one of the places (``keys``) the participant names: "Velmora
    Station" in the participant's town Velmora would name the town. ``folded`` pairs each text's
    :func:`_fold_same_length` copy with the text.

    >>> texts = ["we saw Brask Park", "Brask Park at dawn"]
    >>> sorted(landmarks([(_fold_same_length(t), t) for t in texts], ["brask park"]))
    ['brask park']
    >>> texts = ["we live by Brask Park", "Velmora Station"]
    >>> landmarks([(_fold_same_length(t), t) for t in texts], ["brask park", "velmora station", "velmora"])
    set()
    """
    keys = list(keys)
    words = {key for key in keys if " " not in key}
    result: set[str] = set()
    for key in keys:
        parts = key.split()
        named = len(parts) >= 2 and (parts[-1] in _LANDMARK_LAST or parts[0] in _LANDMARK_FIRST)
        if len(parts) >= 2 and any(p in words for p in parts if p not in _LANDMARK_LAST | _LANDMARK_FIRST):
            continue
        pattern = re.compile(rf"(?<![\w@.]){re.escape(key)}(?![\w@])")
        hits = [(low, text, m) for low, text in folded for m in pattern.finditer(low)]
        if not hits:
            continue
        if not named and not all(_LANDMARK_OF_BEFORE.search(low[: m.start()]) for low, _, m in hits):
            continue
        if any(
            near_anchor(text, m.start(), m.end()) or re.search(r"\d\w*[ ,]+$", text[: m.start()])
            for _, text, m in hits
        ):
            continue
        result.add(key)
    return result


def _trip_place(key: str, folded: list[tuple[str, str]], after_trip: re.Pattern[str] | None) -> bool:
    """True when some occurrence of ``key`` follows a trip word (or a destination and "and", with
    ``after_trip``), none is near an anchor and there are :data:`_TRIP_MENTIONS` of them."""
    pattern = re.compile(rf"(?<![\w@.]){re.escape(key)}(?![\w@])")
    trip = False
    count = 0
    for low, text in folded:
        for m in pattern.finditer(low):
            count += 1
            if near_anchor(text, m.start(), m.end()):
                return False
            before = text[: m.start()]
            if (
                (
                    (_TRIP_BEFORE.search(before) or _FOREIGN_TRIP_BEFORE.search(before))
                    and not _OUTING_BEFORE.search(before)
                )
                or _TRIP_AFTER.match(text[m.end() :])
                or _BOOK_IN_BEFORE.search(before)
            ):
                trip = True
            elif after_trip is not None and after_trip.search(low[: m.start()]):
                trip = True
    return trip and count >= _TRIP_MENTIONS


#: Articles and quantifiers of English and of other languages whose articles no name shares (not
#: "la", "le", "el", "de": "La Toya", "El Chato").
_ARTICLES = (
    r"(?:a|an|the|every|each|any|der|die|das|dem|den|des|ein|eine|einen|einem|einer|het|een|les|un|une|"
    r"los|las|una|il|gli|uno)"
)


def articled_words(texts: Sequence[str], keys: Iterable[str]) -> set[str]:
    """The one-word ``keys`` some text writes after an article, in any case and whether or not a
    recognizer labelled that occurrence ("the Elterngeld thing", "a panda", "die Krankmeldung"):
    a common noun or a title, since a person's name takes none. An occurrence followed by a
    capitalised word is part of a longer name ("the Velmora Pass") and does not count.

    >>> sorted(articled_words(["for the Quellgeld thing", "a trip with Priya"], ["quellgeld", "priya"]))
    ['quellgeld']
    >>> articled_words(["get the Priya Pass"], ["priya"])
    set()
    """
    folded = [(_fold_same_length(t), t) for t in texts]
    result = set()
    for key in keys:
        if " " in key or len(key) < 3:
            continue
        pattern = re.compile(rf"(?<![\w'-]){_ARTICLES}\s+({re.escape(key)})(?![\w'\u2019-])")
        for low, text in folded:
            if any(not re.match(r"\s+[A-Z]", text[m.end(1) :]) for m in pattern.finditer(low)):
                result.add(key)
                break
    return result


def anchored_place(text: str, start: int, end: int) -> bool:
    """True when a place's sentence ties it to someone's home, family or work ("lives in plagwitz,
    leipzig", "my parents in Amman"), or the words before it make it a residence."""
    return residence_before(text, start) or bool(_ANCHOR_SENTENCE.search(_sentence(text, start, end)))


def residence_before(text: str, start: int) -> bool:
    """True when the words before ``start`` make the place a residence or workplace ("lives in")."""
    before = text[:start]
    return bool(_RESIDENCE_BEFORE.search(before) or re.search(r"\b[A-Z][\w&'-]*\s+in\s+$", before))


def _sentence(text: str, start: int, end: int) -> str:
    left = max(text.rfind(c, 0, start) for c in ".!?\n;")
    rights = [i for i in (text.find(c, end) for c in ".!?\n;") if i >= 0]
    return text[left + 1 : min(rights) if rights else len(text)]


def _agency(key: str, surface: str) -> bool:
    """True for an agency or ID scheme of :data:`PUBLIC_AGENCIES`; one of three letters or fewer only
    in capitals ("NAV", "SSS"), since such words are also first names ("Nav", "Fin")."""
    if key not in PUBLIC_AGENCIES:
        return False
    letters = re.sub(r"[^\w]", "", surface)
    return len(key) > 3 or letters.isupper()


def work_context(text: str, start: int, end: int) -> bool:
    """True when the span's sentence ties it to someone's work ("i work nights at tesco") or a
    person acts from it ("ana from glovo asked"): a shop or app named so may be an employer.

    >>> work_context("i work lates at lidl", 16, 20), work_context("cheaper at lidl", 11, 15)
    (True, False)
    """
    if _WORK_SENTENCE.search(_sentence(text, start, end)):
        return True
    return bool(_FROM_BEFORE.search(text[:start]) and _ACTS_AFTER.match(text[end:]))


def public_mention(surface: str, text: str, start: int, end: int, *, kind: str | None = None) -> bool:
    """True for a named-entity span that names something public, not a person's own context.

    Holidays ("Boxing Day", "St Patrick's Day"), widely used platforms and institutions
    (:data:`PUBLIC_ENTITIES`, unless named as an employer: "works at Slack"), a makes' product, a team
    before "game"/"match", a title after a media verb or described by a media noun, a programming
    language in a programming context, and (for an organisation or place ``kind``) one word after a
    time preposition that ends the clause ("before Matariki?").
    """
    key = re.sub(r"^the\s+", "", surface.strip().lower())
    key = re.sub(r"['\u2019]s$", "", key)
    before, after = text[:start], text[end:]
    if _HOLIDAY.match(_fold_same_length(key)):
        return True  # also with its accents: "Tết", "Día de Muertos"
    saint = re.match(r"(?:st\.?|saint)\s+\w+$", key) or re.search(r"\b(?:st\.?|saint)\s+$", before, re.I)
    if _HOLIDAY.match(key) or (saint and _HOLIDAY_TAIL.match(after)):
        return True
    previous = re.search(r"([\w'\u2019]+)\s+$", before)
    if previous and key in ("day", "eve") and _HOLIDAY.match(f"{previous.group(1).lower()} {key}"):
        return True  # "Mother's Day" with "Day" alone labelled
    if _LEGAL_FORM.fullmatch(key) or (_LEGAL_FORM.search(key) and re.search(r"\ban?\s+$", before, re.I)):
        return True  # "an LLC", "the LLC's account", "an Ohio LLC": a legal form, no company named
    employer = bool(_WORK_BEFORE.search(before))
    words = key.split()
    if not employer:
        if key in PUBLIC_ENTITIES or _agency(key, surface):
            return True
        if (
            len(words) >= 2
            and kind != "PERSON"
            and (
                _agency(words[0], surface.split()[0])
                or (kind == "ORGANIZATION" and words[0] in PUBLIC_ENTITIES and surface.lstrip()[:1].isupper())
            )
        ):
            return True  # an agency's programme or service: "Medicare Safety Net", "CRA My Account"
        if words and words[0] in BRANDS and len(words) >= 2:
            return True
        if len(words) == 1 and key in BRANDS and (_DETERMINER_BEFORE.search(before) or after[:2] == "'s"):
            return True
        if (
            _PUBLIC_AFTER.match(after)
            or _CUSTOMER_BEFORE.search(before)
            or _SERVICE_LIKE_BEFORE.search(before)
        ):
            return True  # "the Pixelgram app", "in Pixelgram settings", "banks with Kestrel"
        model = len(words) == 1 and (
            (kind in (None, "ORGANIZATION") and _MODEL_NUMBER_AFTER.match(after))
            or (kind in ("PERSON", "ORGANIZATION") and _MODEL_CODE_AFTER.match(after))
        )
        if _DRIVES_BEFORE.search(before) or model:  # "Mazda 3", not "Karl-Heine-Straße 42"
            return True
        if _CONTAINER_OF_BEFORE.search(before):
            return True  # "a nicer box of Velka Mints": a product
        if (
            kind in ("PERSON", "ORGANIZATION")
            and len(words) == 1
            and _SELLS_ON_BEFORE.search(before)
            and not re.match(r"\s+[A-Z]", after)
        ):
            return True  # "sells knitted hats on quorra": a marketplace
        if kind == "ORGANIZATION" and len(words) == 1 and _INDEFINITE_BEFORE.search(before):
            if not re.match(r"\s*[^\W\d_]", after) and not work_context(text, start, end):
                return True  # "gravel addict on a Cannondale": a product, no organisation
        if key in programming_languages() and _CODE_CONTEXT.search(_sentence(text, start, end)):
            return True
    if (
        kind in ("ORGANIZATION", "LOCATION")
        and _TRANSIT_BEFORE.search(before)
        and _TRANSIT_AFTER.match(after)
    ):
        return True  # "take the Tren Ligero to the stadium": a public transport line
    if _SAINT_DAY.match(key) and _FEAST_SENTENCE.search(_sentence(text, start, end)):
        if not near_anchor(text, start, end) and not _PLACE_PREPOSITION_BEFORE.search(before):
            return True  # "falls on sant jordi (23 april)", "for Sant Jordi the tradition is"
    rest = after[len(possessive_title_tail(surface, after)) :]
    if len(words) >= 2 and words[-1] in _PROGRAMME_HEADS and not _private_word(words[:-1]):
        return True  # "the Tenancy Tribunal", "the SuperGold Card": a public body or programme
    if words and words[-1] in _ROLE_NOUNS and (_ROLE_BEFORE.search(before) or _ROLE_AFTER.match(after)):
        return True  # "works as a Data Analyst", "Audit Senior at …": a job title, no organisation
    if _DESCRIBED_AS_MEDIA.match(rest) or _MEDIA_LIKE_BEFORE.search(before):
        return True  # also "Schitt's Creek is a sitcom" with only "Schitt" labelled
    if surface.startswith("The ") and _LIKED_TITLE_BEFORE.search(before):
        return True
    head = _TITLE_PREFIX.search(before)
    if head and head.group(1).lower() not in _NOT_TITLE_HEAD:
        return True  # "Tears of the Kingdom", "Game of Thrones": the end of a title-case title
    if kind in ("ORGANIZATION", "LOCATION") and kind_hint_event(surface, before, after):
        return True
    if after.startswith("'s") and not possessive_title_tail(surface, after):
        return False  # "watch Tom's recital": the person whose recital it is
    return bool(_WORK_OF_ART_BEFORE.search(before))


#: A container and "of" before a name: the name is a product ("a box of Velka Mints", "a jar of
#: Brask", "two bottles of Tollen").
_CONTAINER_OF_BEFORE = re.compile(
    r"\b(?:box|boxes|bag|bags|bottle|bottles|jar|jars|pack|packs|packet|packets|can|cans|tin|tins|"
    r"tub|tubs|bar|bars|carton|cartons|sachet|sachets|crate|crates)\s+of\s+$",
    re.IGNORECASE,
)
#: Selling something "on" a name: a marketplace ("sells knitted hats on Quorra", "listed on Brask").
_SELLS_ON_BEFORE = re.compile(
    r"\b(?:sell|sells|selling|sold|list|lists|listing|listed)\b[^.!?;\n]{0,60}?\bon\s+$", re.IGNORECASE
)
#: A place preposition right before a name ("celebrating in San Jose": the town).
_PLACE_PREPOSITION_BEFORE = re.compile(r"\b(?:in|at|near|from|to|into|around|outside|via)\s+$", re.I)
#: A ride on a line before a name ("take the Tren Ligero to", "transfer to the Tren Ligero, which").
_TRANSIT_BEFORE = re.compile(
    r"\b(?:take|takes|taking|took|catch|catches|catching|caught|(?:change|changes|transfer|transfers)\s+to)"
    r"\s+the\s+$",
    re.I,
)
#: After a line's name: where it goes or what it does ("to Estadio Azteca", ", which stops at").
_TRANSIT_AFTER = re.compile(r"\s+to\b|,?\s+which\s+(?:stops|runs|goes|leaves|takes)\b")
#: An indefinite article right before a name.
_INDEFINITE_BEFORE = re.compile(r"\b(?:a|an)\s+$", re.IGNORECASE)
#: A saint's name in the languages that name feast days after one ("Sant Jordi", "San Juan",
#: "São João", "Sankt Martin", "Saint-Jean").
_SAINT_DAY = re.compile(r"^(?:sant|san|santa|santo|sao|sankt|saint|st\.?)[ -][a-z]+$")
#: A date or a festival word in a sentence: the saint's name is the feast, not a place.
_FEAST_SENTENCE = re.compile(
    r"\b(?:tradition\w*|festival|feast|fiesta|festa|celebrat\w*|holiday|falls\s+on|\d{1,2}\s+(?:jan|feb|mar|apr|may|"
    r"jun|jul|aug|sep|oct|nov|dec)\w*|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\s+\d{1,2}\b)",
    re.IGNORECASE,
)
#: A possessive and capitalised words after a name: the rest of a title ("Schitt" + "'s Creek").
_POSSESSIVE_TITLE_TAIL = re.compile(r"^['\u2019]s(?:\s+[A-Z][\w'\u2019-]*)+")
_TITLE_TAIL = re.compile(r"^(?:\s+[A-Z][\w'\u2019-]*)+")


def possessive_title_tail(surface: str, after: str) -> str:
    """The capitalised words that continue a possessive name into a title ("'s Creek" after
    "Schitt", " Anatomy" after "Grey's"), else "".

    >>> possessive_title_tail("Schitt", "'s Creek is on"), possessive_title_tail("Tom", "'s recital")
    ("'s Creek", '')
    """
    if re.search(r"['\u2019]s$", surface):
        m = _TITLE_TAIL.match(after)
    else:
        m = _POSSESSIVE_TITLE_TAIL.match(after)
    return m.group(0) if m else ""


#: A capitalised word and "of (the)" right before a span, with no "the" before the word: the span
#: ends a title ("love Tears of the Kingdom"), unlike "the Royal Infirmary of Edinburgh".
_TITLE_PREFIX = re.compile(r"(?<![\w'-])(?<!\bthe\s)([A-Z][\w'-]+)\s+of(?:\s+the)?\s+$")
#: Heads of "X of Y" names that are organisations, places or offices, not titles.
_NOT_TITLE_HEAD = frozenset(
    """university college bank school institute hospital museum church cathedral department ministry
    council board republic isle isles island islands bay city county state kingdom house faculty
    society royal duchy province gulf sea lake port district borough town village mayor president
    king queen prince princess duke duchess bishop archbishop governor minister secretary chancellor
    lord lady earl baron centre center north south east west heart edge outskirts rest part side
    friends sisters brothers order office bureau court commission agency library academy federation
    union league association club infirmary hospice clinic surgery practice trust foundation group
    company corporation firm head director chief team dean rector""".split()
)


def kind_hint_event(surface: str, before: str, after: str) -> bool:
    """True for one capitalised word after a time preposition that ends the clause or precedes
    "break"/"holidays" ("before Matariki?", "over Hanukkah break"): an event, not an identifier."""
    return (
        " " not in surface.strip()
        and surface[:1].isupper()
        and not surface.isupper()
        and bool(_TIME_BEFORE.search(before))
        and bool(_EVENT_AFTER.match(after))
    )


_TITLE_AFTER_VERB = re.compile(
    rf"\b{_MEDIA_VERB}\s+(?:the\s+)?(?P<v>[A-Za-z\u00c0-\u024f][\w'\u00c0-\u024f-]*"
    rf"(?:\s+[A-Za-z\u00c0-\u024f0-9][\w'\u00c0-\u024f-]*){{0,4}})",
    re.IGNORECASE,
)
_NOT_TITLE_START = frozenset(
    """a an my your his her their our its it this that some any with to out up for on in at me him them
    us you what how when where whether if""".split()
)


def media_titles(text: str) -> list[str]:
    """Lowercased titles named after a media verb, in any case ("watches the great british bake off
    every week" gives "great british bake off"; "watch the last of us or shogun" gives both); a
    title stops at a function or time word ("of" and "the" may sit inside one)."""
    titles = []
    for m in _TITLE_AFTER_VERB.finditer(text):
        words = m.group("v").split()
        if words[0].lower() in _NOT_TITLE_START or (words[0].islower() and "'s" in words[0]):
            continue
        current: list[str] = []
        for word in words:
            bare = word.lower().strip(',.;:!?()"')
            if bare in ("or", "and") and current:
                titles.append(" ".join(current))
                current = []
                continue
            if not bare or (bare in _STOP and not (current and bare in ("of", "the"))):
                break
            current.append(bare)
            if word[-1:] in ",.;:!?)":
                break
        while current and current[-1] in ("of", "the"):
            current.pop()
        if current:
            titles.append(" ".join(current))
    return titles


#: Words that offer alternatives of one kind ("is kvz or dorna cheaper", "neither KVZ nor Dorna").
_ALTERNATIVE = r"(?:or|nor|vs\.?|versus)"


def alternatives(texts: Sequence[str], public: Iterable[str]) -> set[str]:
    """The one-word names that a text offers as an alternative to a public name (``public``,
    folded: "is kvz or dorna cheaper", "Dorna vs KVZ"): a rival insurer, app or scheme, public like
    it. A name that some text writes near a home, family or work (:func:`near_anchor`,
    :func:`work_context`) is left out, and so is a stop word.

    >>> sorted(alternatives(["is kvz or dorna cheaper?", "Neither KVZ nor Dorna"], ["kvz"]))
    ['dorna']
    >>> alternatives(["is kvz or dorna cheaper?", "i work at dorna"], ["kvz"])
    set()
    """
    from .detectors import _stop_words

    keys = sorted({k for k in public if k and " " not in k}, key=len, reverse=True)
    if not keys:
        return set()
    folded = [(_fold_same_length(t), t) for t in texts]
    names = "|".join(re.escape(k) for k in keys)
    word = r"[^\W\d_][\w'-]*"
    pattern = re.compile(
        rf"(?<![\w@./-])(?:(?:{names})\s+{_ALTERNATIVE}\s+(?P<after>{word})|(?P<before>{word})\s+{_ALTERNATIVE}\s+(?:{names}))(?![\w@-])"
    )
    found = (
        {(m.group("after") or m.group("before")).lower() for low, _ in folded for m in pattern.finditer(low)}
        - set(keys)
        - _stop_words()
    )
    result = set()
    for name in found:
        if not anchored_word(name, folded):
            result.add(name)
    return result


def anchored_word(word: str, folded: Iterable[tuple[str, str]]) -> bool:
    """True when a text writes ``word`` (folded, as a whole word: no letter, digit, "@", "." or
    hyphen joined to it) near a home, family or work (:func:`near_anchor`, :func:`work_context`):
    it may be the participant's employer, school or town, whatever else makes it look public.
    ``folded`` pairs each text's folded copy, of the same length, with the text.

    >>> anchored_word("dorna", [("i work at dorna", "i work at dorna")])
    True
    >>> anchored_word("dorna", [("is dorna cheaper", "is dorna cheaper")])
    False
    """
    pattern = re.compile(rf"(?<![\w@./-]){re.escape(word)}(?![\w@-])")
    return any(
        near_anchor(text, m.start(), m.end()) or work_context(text, m.start(), m.end())
        for low, text in folded
        for m in pattern.finditer(low)
    )
