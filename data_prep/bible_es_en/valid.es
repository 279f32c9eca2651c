Y viendo las gentes, subió al monte; y sentándose, se llegaron á él sus discípulos.
Y abriendo su boca, les enseñaba, diciendo:
Bienaventurados los pobres en espíritu: porque de ellos es el reino de los cielos.
Bienaventurados los que lloran: porque ellos recibirán consolación.
Bienaventurados los mansos: porque ellos recibirán la tierra por heredad.
Bienaventurados los que tienen hambre y sed de justicia: porque ellos serán hartos.
Bienaventurados los misericordiosos: porque ellos alcanzarán misericordia.
Bienaventurados los de limpio corazón: porque ellos verán á Dios.
Bienaventurados los pacificadores: porque ellos serán llamados hijos de Dios.
Bienaventurados los que padecen persecución por causa de la justicia: porque de ellos es el reino de los cielos.
Bienaventurados sois cuando os vituperaren y os persiguieren, y dijeren de vosotros todo mal por mi causa, mintiendo.
Gozaos y alegraos; porque vuestra merced es grande en los cielos: que así persiguieron á los profetas que fueron antes de vosotros.
Vosotros sois la sal de la tierra: y si la sal se desvaneciere ¿con qué será salada? no vale más para nada, sino para ser echada fuera y hollada de los hombres.
Vosotros sois la luz del mundo: una ciudad asentada sobre un monte no se puede esconder.
Ni se enciende una lámpara y se pone debajo de un almud, mas sobre el candelero, y alumbra á todos los que están en casa.
Así alumbre vuestra luz delante de los hombres, para que vean vuestras obras buenas, y glorifiquen á vuestro Padre que está en los cielos.
No penséis que he venido para abrogar la ley ó los profetas: no he venido para abrogar, sino á cumplir.
Porque de cierto os digo, que hasta que perezca el cielo y la tierra, ni una jota ni un tilde perecerá de la ley, hasta que todas las cosas sean hechas.
De manera que cualquiera que infringiere uno de estos mandamientos muy pequeños, y así enseñare á los hombres, muy pequeño será llamado en el reino de los cielos: mas cualquiera que hiciere y enseñare, éste será llamado grande en el reino de los cielos.
Porque os digo, que si vuestra justicia no fuere mayor que la de los escribas y de los Fariseos, no entraréis en el reino de los cielos.
Oísteis que fué dicho á los antiguos: No matarás; mas cualquiera que matare, será culpado del juicio.
Mas yo os digo, que cualquiera que se enojare locamente con su hermano, será culpado del juicio; y cualquiera que dijere á su hermano, Raca, será culpado del concejo; y cualquiera que dijere, Fatuo, será culpado del infierno del fuego.
Por tanto, si trajeres tu presente al altar, y allí te acordares de que tu hermano tiene algo contra ti,
Deja allí tu presente delante del altar, y vete, vuelve primero en amistad con tu hermano, y entonces ven y ofrece tu presente.
Concíliate con tu adversario presto, entre tanto que estás con él en el camino; porque no acontezca que el adversario te entregue al juez, y el juez te entregue al alguacil, y seas echado en prisión.
De cierto te digo, que no saldrás de allí, hasta que pagues el último cuadrante.
Oísteis que fué dicho: No adulterarás:
Mas yo os digo, que cualquiera que mira á una mujer para codiciarla, ya adulteró con ella en su corazón.
Por tanto, si tu ojo derecho te fuere ocasión de caer, sácalo, y échalo de ti: que mejor te es que se pierda uno de tus miembros, que no que todo tu cuerpo sea echado al infierno.
Y si tu mano derecha te fuere ocasión de caer, córtala, y échala de ti: que mejor te es que se pierda uno de tus miembros, que no que todo tu cuerpo sea echado al infierno.
También fué dicho: Cualquiera que repudiare á su mujer, déle carta de divorcio:
Mas yo os digo, que el que repudiare á su mujer, fuera de causa de fornicación, hace que ella adultere; y el que se casare con la repudiada, comete adulterio.
Además habéis oído que fué dicho á los antiguos: No te perjurarás; mas pagarás al Señor tus juramentos.
Mas yo os digo: No juréis en ninguna manera: ni por el cielo, porque es el trono de Dios;
Ni por la tierra, porque es el estrado de sus pies; ni por Jerusalem, porque es la ciudad del gran Rey.
Ni por tu cabeza jurarás, porque no puedes hacer un cabello blanco ó negro.
Mas sea vuestro hablar: Sí, sí; No, no; porque lo que es más de esto, de mal procede.
Oísteis que fué dicho á los antiguos: Ojo por ojo, y diente por diente.
Mas yo os digo: No resistáis al mal; antes á cualquiera que te hiriere en tu mejilla diestra, vuélvele también la otra;
Y al que quisiere ponerte á pleito y tomarte tu ropa, déjale también la capa;
Y á cualquiera que te cargare por una milla, ve con él dos.
Al que te pidiere, dale; y al que quisiere tomar de ti prestado, no se lo rehuses.
Oísteis que fué dicho: Amarás á tu prójimo, y aborrecerás á tu enemigo.
Mas yo os digo: Amad á vuestros enemigos, bendecid á los que os maldicen, haced bien á los que os aborrecen, y orad por los que os ultrajan y os persiguen;
Para que seáis hijos de vuestro Padre que está en los cielos: que hace que su sol salga sobre malos y buenos, y llueve sobre justos é injustos.
Porque si amareis á los que os aman, ¿qué recompensa tendréis? ¿no hacen también lo mismo los publicanos?
Y si abrazareis á vuestros hermanos solamente, ¿qué hacéis de más? ¿no hacen también así los Gentiles?
Sed, pues, vosotros perfectos, como vuestro Padre que está en los cielos es perfecto.
Entonces llegaron á Jesús ciertos escribas y Fariseos de Jerusalem, diciendo:
¿Por qué tus discípulos traspasan la tradición de los ancianos? porque no se lavan las manos cuando comen pan.
Y él respondiendo, les dijo: ¿Por qué también vosotros traspasáis el mandamiento de Dios por vuestra tradición?
Porque Dios mandó, diciendo: Honra al padre y á la madre, y, El que maldijere al padre ó á la madre, muera de muerte.
Mas vosotros decís: Cualquiera que dijere al padre ó á la madre: Es ya ofrenda mía á Dios todo aquello con que pudiera valerte;
No deberá honrar á su padre ó á su madre con socorro. Así habéis invalidado el mandamiento de Dios por vuestra tradición.
Hipócritas, bien profetizó de vosotros Isaías, diciendo:
Este pueblo de labios me honra; mas su corazón lejos está de mí.
Mas en vano me honran, enseñando doctrinas y mandamientos de hombres.
Y llamando á sí las gentes, les dijo: Oid, y entended:
No lo que entra en la boca contamina al hombre; mas lo que sale de la boca, esto contamina al hombre.
Entonces llegándose sus discípulos, le dijeron: ¿Sabes que los Fariseos oyendo esta palabra se ofendieron?
Mas respondiendo él, dijo: Toda planta que no plantó mi Padre celestial, será desarraigada.
Dejadlos: son ciegos guías de ciegos; y si el ciego guiare al ciego, ambos caerán en el hoyo.
Y respondiendo Pedro, le dijo: Decláranos esta parábola.
Y Jesús dijo: ¿Aun también vosotros sois sin entendimiento?
¿No entendéis aún, que todo lo que entra en la boca, va al vientre, y es echado en la letrina?
Mas lo que sale de la boca, del corazón sale; y esto contamina al hombre.
Porque del corazón salen los malos pensamientos, muertes, adulterios, fornicaciones, hurtos, falsos testimonios, blasfemias.
Estas cosas son las que contaminan al hombre: que comer con las manos por lavar no contamina al hombre.
Y saliendo Jesús de allí, se fué á las partes de Tiro y de Sidón.
Y he aquí una mujer Cananea, que había salido de aquellos términos, clamaba, diciéndole: Señor, Hijo de David, ten misericordia de mí; mi hija es malamente atormentada del demonio.
Mas él no le respondió palabra. Entonces llegándose sus discípulos, le rogaron, diciendo: Despáchala, pues da voces tras nosotros.
Y él respondiendo, dijo: No soy enviado sino á las ovejas perdidas de la casa de Israel.
Entonces ella vino, y le adoró, diciendo: Señor, socórreme.
Y respondiendo él, dijo: No es bien tomar el pan de los hijos, y echarlo á los perrillos.
Y ella dijo: Sí, Señor; mas los perrillos comen de las migajas que caen de la mesa de sus señores.
Entonces respondiendo Jesús, dijo: Oh mujer, grande es tu fe; sea hecho contigo como quieres. Y fué sana su hija desde aquella hora.
Y partido Jesús de allí, vino junto al mar de Galilea: y subiendo al monte, se sentó allí.
Y llegaron á él muchas gentes, que tenían consigo cojos, ciegos, mudos, mancos, y otros muchos enfermos: y los echaron á los pies de Jesús, y los sanó:
De manera que se maravillaban las gentes, viendo hablar los mudos, los mancos sanos, andar los cojos, y ver los ciegos: y glorificaron al Dios de Israel.
Y Jesús llamando á sus discípulos, dijo: Tengo lástima de la gente, que ya hace tres días que perseveran conmigo, y no tienen qué comer; y enviarlos ayunos no quiero, porque no desmayen en el camino.
Entonces sus discípulos le dicen: ¿Dónde tenemos nosotros tantos panes en el desierto, que hartemos á tan gran compañía?
Y Jesús les dice: ¿Cuántos panes tenéis? Y ellos dijeron: Siete, y unos pocos pececillos.
Y mandó á las gentes que se recostasen sobre la tierra.
Y tomando los siete panes y los peces, haciendo gracias, partió y dió á sus discípulos; y los discípulos á la gente.
Y comieron todos, y se hartaron: y alzaron lo que sobró de los pedazos, siete espuertas llenas.
Y eran los que habían comido, cuatro mil hombres, sin las mujeres y los niños.
Entonces, despedidas las gentes, subió en el barco: y vino á los términos de Magdalá.
Entonces el reino de los cielos será semejante á diez vírgenes, que tomando sus lámparas, salieron á recibir al esposo.
Y las cinco de ellas eran prudentes, y las cinco fatuas.
Las que eran fatuas, tomando sus lámparas, no tomaron consigo aceite;
Mas las prudentes tomaron aceite en sus vasos, juntamente con sus lámparas.
Y tardándose el esposo, cabecearon todas, y se durmieron.
Y á la media noche fué oído un clamor: He aquí, el esposo viene; salid á recibirle.
Entonces todas aquellas vírgenes se levantaron, y aderezaron sus lámparas.
Y las fatuas dijeron á las prudentes: Dadnos de vuestro aceite; porque nuestras lámparas se apagan.
Mas las prudentes respondieron, diciendo: Porque no nos falte á nosotras y á vosotras, id antes á los que venden, y comprad para vosotras.
Y mientras que ellas iban á comprar, vino el esposo; y las que estaban apercibidas, entraron con él á las bodas; y se cerró la puerta.
Y después vinieron también las otras vírgenes, diciendo: Señor, Señor, ábrenos.
Mas respondiendo él, dijo: De cierto os digo, que no os conozco.
Velad, pues, porque no sabéis el día ni la hora en que el Hijo del hombre ha de venir.
Porque el reino de los cielos es como un hombre que partiéndose lejos llamó á sus siervos, y les entregó sus bienes.
Y á éste dió cinco talentos, y al otro dos, y al otro uno: á cada uno conforme á su facultad; y luego se partió lejos.
Y el que había recibido cinco talentos se fué, y granjeó con ellos, é hizo otros cinco talentos.
Asimismo el que había recibido dos, ganó también él otros dos.
Mas el que había recibido uno, fué y cavó en la tierra, y escondió el dinero de su señor.
Y después de mucho tiempo, vino el señor de aquellos siervos, é hizo cuentas con ellos.
Y llegando el que había recibido cinco talentos, trajo otros cinco talentos, diciendo: Señor, cinco talentos me entregaste; he aquí otros cinco talentos he ganado sobre ellos.
Y su señor le dijo: Bien, buen siervo y fiel; sobre poco has sido fiel, sobre mucho te pondré: entra en el gozo de tu señor.
Y llegando también el que había recibido dos talentos, dijo: Señor, dos talentos me entregaste; he aquí otros dos talentos he ganado sobre ellos.
Su señor le dijo: Bien, buen siervo y fiel; sobre poco has sido fiel, sobre mucho te pondré: entra en el gozo de tu señor.
Y llegando también el que había recibido un talento, dijo: Señor, te conocía que eres hombre duro, que siegas donde no sembraste, y recoges donde no esparciste;
Y tuve miedo, y fuí, y escondí tu talento en la tierra: he aquí tienes lo que es tuyo.
Y respondiendo su señor, le dijo: Malo y negligente siervo, sabías que siego donde no sembré y que recojo donde no esparcí;
Por tanto te convenía dar mi dinero á los banqueros, y viniendo yo, hubiera recibido lo que es mío con usura.
Quitadle pues el talento, y dadlo al que tiene diez talentos.
Porque á cualquiera que tuviere, le será dado, y tendrá más; y al que no tuviere, aun lo que tiene le será quitado.
Y al siervo inútil echadle en las tinieblas de afuera: allí será el lloro y el crujir de dientes.
Y cuando el Hijo del hombre venga en su gloria, y todos los santos ángeles con él, entonces se sentará sobre el trono de su gloria.
Y serán reunidas delante de él todas las gentes: y los apartará los unos de los otros, como aparta el pastor las ovejas de los cabritos.
Y pondrá las ovejas á su derecha, y los cabritos á la izquierda.
Entonces el Rey dirá á los que estarán á su derecha: Venid, benditos de mi Padre, heredad el reino preparado para vosotros desde la fundación del mundo:
Porque tuve hambre, y me disteis de comer; tuve sed, y me disteis de beber; fuí huésped, y me recogisteis;
Desnudo, y me cubristeis; enfermo, y me visitasteis; estuve en la cárcel, y vinisteis á mí.
Entonces los justos le responderán, diciendo: Señor, ¿cuándo te vimos hambriento, y te sustentamos? ¿ó sediento, y te dimos de beber?
¿Y cuándo te vimos huésped, y te recogimos? ¿ó desnudo, y te cubrimos?
¿O cuándo te vimos enfermo, ó en la cárcel, y vinimos á ti?
Y respondiendo el Rey, les dirá: De cierto os digo que en cuanto lo hicisteis á uno de estos mis hermanos pequeñitos, á mí lo hicisteis.
Entonces dirá también á los que estarán á la izquierda: Apartaos de mí, malditos, al fuego eterno preparado para el diablo y para sus ángeles:
Porque tuve hambre, y no me disteis de comer; tuve sed, y no me disteis de beber;
Fuí huésped, y no me recogisteis; desnudo, y no me cubristeis; enfermo, y en la cárcel, y no me visitasteis.
Entonces también ellos le responderán, diciendo: Señor, ¿cuándo te vimos hambriento, ó sediento, ó huésped, ó desnudo, ó enfermo, ó en la cárcel, y no te servimos?
Entonces les responderá, diciendo: De cierto os digo que en cuanto no lo hicisteis á uno de estos pequeñitos, ni á mí lo hicisteis.
E irán éstos al tormento eterno, y los justos á la vida eterna.
Y se juntaron á él los Fariseos, y algunos de los escribas, que habían venido de Jerusalem;
Los cuales, viendo á algunos de sus discípulos comer pan con manos comunes, es á saber, no lavadas, los condenaban.
(Porque los Fariseos y todos los Judíos, teniendo la tradición de los ancianos, si muchas veces no se lavan las manos, no comen.
Y volviendo de la plaza, si no se lavaren, no comen. Y otras muchas cosas hay, que tomaron para guardar, como las lavaduras de los vasos de beber, y de los jarros, y de los vasos de metal, y de los lechos.)
Y le preguntaron los Fariseos y los escribas: ¿Por qué tus discípulos no andan conforme á la tradición de los ancianos, sino que comen pan con manos comunes?
Y respondiendo él, les dijo: Hipócritas, bien profetizó de vosotros Isaías, como está escrito: Este pueblo con los labios me honra, mas su corazón lejos está de mí.
Y en vano me honran, enseñando como doctrinas mandamientos de hombres.
Porque dejando el mandamiento de Dios, tenéis la tradición de los hombres; las lavaduras de los jarros y de los vasos de beber: y hacéis otras muchas cosas semejantes.
Les decía también: Bien invalidáis el mandamiento de Dios para guardar vuestra tradición.
Porque Moisés dijo: Honra á tu padre y á tu madre, y: El que maldijere al padre ó á la madre, morirá de muerte.
Y vosotros decís: Basta si dijere un hombre al padre ó la madre: Es Corbán (quiere decir, don mío á Dios) todo aquello con que pudiera valerte;
Y no le dejáis hacer más por su padre ó por su madre,
Invalidando la palabra de Dios con vuestra tradición que disteis: y muchas cosas hacéis semejantes á éstas.
Y llamando á toda la multitud, les dijo: Oidme todos, y entended:
Nada hay fuera del hombre que entre en él, que le pueda contaminar: mas lo que sale de él, aquello es lo que contamina al hombre.
Si alguno tiene oídos para oir, oiga.
Y apartado de la multitud, habiendo entrado en casa, le preguntaron sus discípulos sobre la parábola.
Y díjoles: ¿También vosotros estáis así sin entendimiento? ¿No entendéis que todo lo de fuera que entra en el hombre, no le puede contaminar;
Porque no entra en su corazón, sino en el vientre, y sale á la secreta? Esto decía, haciendo limpias todas las viandas.
Mas decía, que lo que del hombre sale, aquello contamina al hombre.
Porque de dentro, del corazón de los hombres, salen los malos pensamientos, los adulterios, las fornicaciones, los homicidios,
Los hurtos, las avaricias, las maldades, el engaño, las desvergüenzas, el ojo maligno, las injurias, la soberbia, la insensatez.
Todas estas maldades de dentro salen, y contaminan al hombre.
Y levantándose de allí, se fué á los términos de Tiro y de Sidón; y entrando en casa, quiso que nadie lo supiese; mas no pudo esconderse.
Porque una mujer, cuya hija tenía un espíritu inmundo, luego que oyó de él, vino y se echó á sus pies.
Y la mujer era Griega, Sirofenisa de nación; y le rogaba que echase fuera de su hija al demonio.
Mas Jesús le dijo: Deja primero hartarse los hijos, porque no es bien tomar el pan de los hijos y echarlo á los perrillos.
Y respondió ella, y le dijo: Sí, Señor; pero aun los perrillos debajo de la mesa, comen de las migajas de los hijos.
Entonces le dice: Por esta palabra, ve; el demonio ha salido de tu hija.
Y como fué á su casa, halló que el demonio había salido, y á la hija echada sobre la cama.
Y volviendo á salir de los términos de Tiro, vino por Sidón á la mar de Galilea, por mitad de los términos de Decápolis.
Y le traen un sordo y tartamudo, y le ruegan que le ponga la mano encima.
Y tomándole aparte de la gente, metió sus dedos en las orejas de él, y escupiendo, tocó su lengua;
Y mirando al cielo, gimió, y le dijo: Ephphatha: que es decir: Sé abierto.
Y luego fueron abiertos sus oídos, y fué desatada la ligadura de su lengua, y hablaba bien.
Y les mandó que no lo dijesen á nadie; pero cuanto más les mandaba, tanto más y más lo divulgaban.
Y en gran manera se maravillaban, diciendo: Bien lo ha hecho todo: hace á los sordos oir, y á los mudos hablar.
Habiendo muchos tentado á poner en orden la historia de las cosas que entre nosotros han sido ciertísimas,
Como nos lo enseñaron los que desde el principio lo vieron por sus ojos, y fueron ministros de la palabra;
Me ha parecido también á mí, después de haber entendido todas las cosas desde el principio con diligencia, escribírtelas por orden, oh muy buen Teófilo,
Para que conozcas la verdad de las cosas en las cuales has sido enseñado.
HUBO en los días de Herodes, rey de Judea, un sacerdote llamado Zacarías, de la suerte de Abías; y su mujer, de las hijas de Aarón, llamada Elisabet.
Y eran ambos justos delante de Dios, andando sin reprensión en todos los mandamientos y estatutos del Señor.
Y no tenían hijo, porque Elisabet era estéril, y ambos eran avanzados en días.
Y aconteció que ejerciendo Zacarías el sacerdocio delante de Dios por el orden de su vez,
Conforme á la costumbre del sacerdocio, salió en suerte á poner el incienso, entrando en el templo del Señor.
Y toda la multitud del pueblo estaba fuera orando á la hora del incienso.
Y se le apareció el ángel del Señor puesto en pie á la derecha del altar del incienso.
Y se turbó Zacarías viéndo le, y cayó temor sobre él.
Mas el ángel le dijo: Zacarías, no temas; porque tu oración ha sido oída, y tu mujer Elisabet te parirá un hijo, y llamarás su nombre Juan.
Y tendrás gozo y alegría, y muchos se gozarán de su nacimiento.
Porque será grande delante de Dios, y no beberá vino ni sidra; y será lleno del Espíritu Santo, aun desde el seno de su madre.
Y á muchos de los hijos de Israel convertirá al Señor Dios de ellos.
Porque él irá delante de él con el espíritu y virtud de Elías, para convertir los corazones de los padres á los hijos, y los rebeldes á la prudencia de los justos, para aparejar al Señor un pueblo apercibido.
Y dijo Zacarías al ángel: ¿En qué conoceré esto? porque yo soy viejo, y mi mujer avanzada en días.
Y respondiendo el ángel le dijo: Yo soy Gabriel, que estoy delante de Dios; y soy enviado á hablarte, y á darte estas buenas nuevas.
Y he aquí estarás mudo y no podrás hablar, hasta el día que esto sea hecho, por cuanto no creíste á mis palabras, las cuales se cumplirán á su tiempo.
Y el pueblo estaba esperando á Zacarías, y se maravillaban de que él se detuviese en el templo.
Y saliendo, no les podía hablar: y entendieron que había visto visión en el templo: y él les hablaba por señas, y quedó mudo.
Y fué, que cumplidos los días de su oficio, se vino á su casa.
Y después de aquellos días concibió su mujer Elisabet, y se encubrió por cinco meses, diciendo:
Porque el Señor me ha hecho así en los días en que miró para quitar mi afrenta entre los hombres.
Y al sexto mes, el ángel Gabriel fué enviado de Dios á una ciudad de Galilea, llamada Nazaret,
A una virgen desposada con un varón que se llamaba José, de la casa de David: y el nombre de la virgen era María.
Y entrando el ángel á donde estaba, dijo, ¡Salve, muy favorecida! el Señor es contigo: bendita tú entre las mujeres.
Mas ella, cuando le vió, se turbó de sus palabras, y pensaba qué salutación fuese ésta.
Entonces el ángel le dijo: María, no temas, porque has hallado gracia cerca de Dios.
Y he aquí, concebirás en tu seno, y parirás un hijo, y llamarás su nombre JESUS.
Este será grande, y será llamado Hijo del Altísimo: y le dará el Señor Dios el trono de David su padre:
Y reinará en la casa de Jacob por siempre; y de su reino no habrá fin.
Entonces María dijo al ángel: ¿Cómo será esto? porque no conozco varón.
Y respondiendo el ángel le dijo: El Espíritu Santo vendrá sobre ti, y la virtud del Altísimo te hará sombra; por lo cual también lo Santo que nacerá, será llamado Hijo de Dios.
Y he aquí, Elisabet tu parienta, también ella ha concebido hijo en su vejez; y este es el sexto mes á ella que es llamada la estéril:
Porque ninguna cosa es imposible para Dios.
Entonces María dijo: He aquí la sierva del Señor; hágase á mí conforme á tu palabra. Y el ángel partió de ella.
En aquellos días levantándose María, fué á la montaña con priesa, á una ciudad de Judá;
Y entró en casa de Zacarías, y saludó á Elisabet.
Y aconteció, que como oyó Elisabet la salutación de María, la criatura saltó en su vientre; y Elisabet fué llena del Espíritu Santo,
Y exclamó á gran voz, y dijo: Bendita tú entre las mujeres, y bendito el fruto de tu vientre.
¿Y de dónde esto á mí, que la madre de mi Señor venga á mí?
Porque he aquí, como llegó la voz de tu salutación á mis oídos, la criatura saltó de alegría en mi vientre.
Y bienaventurada la que creyó, porque se cumplirán las cosas que le fueron dichas de parte del Señor.
Entonces María dijo: engrandece mi alma al Señor;
Y mi espíritu se alegró en Dios mi Salvador.
Porque ha mirado á la bajeza de su criada; porque he aquí, desde ahora me dirán bienaventurada todas las generaciones.
Porque me ha hecho grandes cosas el Poderoso; y santo es su nombre.
Y su misericordia de generación á generación á los que le temen.
Hizo valentía con su brazo: esparció los soberbios del pensamiento de su corazón.
Quitó los poderosos de los tronos, y levantó á los humildes.
A los hambrientos hinchió de bienes; y á los ricos envió vacíos.
Recibió á Israel su siervo, acordándose de la misericordia,
Como habló á nuestros padres á Abraham y á su simiente para siempre.
Y se quedó María con ella como tres meses: después se volvió á su casa.
Y á Elisabet se le cumplió el tiempo de parir, y parió un hijo.
Y oyeron los vecinos y los parientes que Dios había hecho con ella grande misericordia, y se alegraron con ella.
Y aconteció, que al octavo día vinieron para circuncidar al niño; y le llamaban del nombre de su padre, Zacarías.
Y respondiendo su madre, dijo: No; sino Juan será llamado.
Y le dijeron: ¿Por qué? nadie hay en tu parentela que se llame de este nombre.
Y hablaron por señas á su padre, cómo le quería llamar.
Y demandando la tablilla, escribió, diciendo: Juan es su nombre. Y todos se maravillaron.
Y luego fué abierta su boca y su lengua, y habló bendiciendo á Dios.
Y fué un temor sobre todos los vecinos de ellos; y en todas las montañas de Judea fueron divulgadas todas estas cosas.
Y todos los que las oían, las conservaban en su corazón, diciendo: ¿Quién será este niño? Y la mano del Señor estaba con él.
Y Zacarías su padre fué lleno de Espíritu Santo, y profetizó, diciendo:
Bendito el Señor Dios de Israel, que ha visitado y hecho redención á su pueblo,
Y nos alzó un cuerno de salvación en la casa de David su siervo,
Como habló por boca de sus santos profetas que fueron desde el principio:
Salvación de nuestros enemigos, y de mano de todos los que nos aborrecieron;
Para hacer misericordia con nuestros padres, y acordándose de su santo pacto;
Del juramento que juró á Abraham nuestro padre, que nos había de dar,
Que sin temor librados de nuestros enemigos, le serviríamos
En santidad y en justicia delante de él, todos los días nuestros.
Y tú, niño, profeta del Altísimo serás llamado; porque irás ante la faz del Señor, para aparejar sus caminos;
Dando conocimiento de salud á su pueblo, para remisión de sus pecados,
Por las entrañas de misericordia de nuestro Dios, con que nos visitó de lo alto el Oriente,
Para dar luz á los que habitan en tinieblas y en sombra de muerte; para encaminar nuestros pies por camino de paz.
Y el niño crecía, y se fortalecía en espíritu: y estuvo en los desiertos hasta el día que se mostró á Israel.
Y aconteció que estando él orando en un lugar, como acabó, uno de sus discípulos le dijo: Señor, enséñanos á orar, como también Juan enseñó á sus discípulos.
Y les dijo: Cuando orareis, decid: Padre nuestro que estás en los cielos; sea tu nombre santificado. Venga tu reino. Sea hecha tu voluntad, como en el cielo, así también en la tierra.
El pan nuestro de cada día, dános lo hoy.
Y perdónanos nuestros pecados, porque también nosotros perdonamos á todos los que nos deben. Y no nos metas en tentación, mas líbranos del malo.
Díjoles también: ¿Quién de vosotros tendrá un amigo, é irá á él á media noche, y le dirá: Amigo, préstame tres panes,
Porque un amigo mío ha venido á mí de camino, y no tengo qué ponerle delante;
Y el de dentro respondiendo, dijere: No me seas molesto; la puerta está ya cerrada, y mis niños están conmigo en cama; no puedo levantarme, y darte?
Os digo, que aunque no se levante á darle por ser su amigo, cierto por su importunidad se levantará, y le dará todo lo que habrá menester.
Y yo os digo: Pedid, y se os dará; buscad, y hallaréis; llamad, y os será abierto.
Porque todo aquel que pide, recibe; y el que busca, halla; y al que llama, se abre.
¿Y cuál padre de vosotros, si su hijo le pidiere pan, le dará una piedra? ó, si pescado, ¿en lugar de pescado, le dará una serpiente?
O, si le pidiere un huevo, ¿le dará un escorpión?
Pues si vosotros, siendo malos, sabéis dar buenas dádivas á vuestros hijos, ¿cuánto más vuestro Padre celestial dará el Espíritu Santo á los que lo pidieren de él?
Y estaba él lanzando un demonio, el cual era mudo: y aconteció que salido fuera el demonio, el mudo habló, y las gentes se maravillaron.
Mas algunos de ellos decían: En Beelzebub, príncipe de los demonios, echa fuera los demonios.
Y otros, tentando, pedían de él señal del cielo.
Mas él, conociendo los pensamientos de ellos, les dijo: Todo reino dividido contra sí mismo, es asolado; y una casa dividida contra sí misma, cae.
Y si también Satanás está dividido contra sí mismo, ¿cómo estará en pie su reino? porque decís que en Beelzebub echo yo fuera los demonios.
Pues si yo echo fuera los demonios en Beelzebub, ¿vuestros hijos en quién los echan fuera? Por tanto, ellos serán vuestros jueces.
Mas si por el dedo de Dios echo yo fuera los demonios, cierto el reino de Dios ha llegado á vosotros.
Cuando el fuerte armado guarda su atrio, en paz está lo que posee.
Mas si sobreviniendo otro más fuerte que él, le venciere, le toma todas sus armas en que confiaba, y reparte sus despojos.
El que no es conmigo, contra mí es; y el que conmigo no recoge, desparrama.
Cuando el espíritu inmundo saliere del hombre, anda por lugares secos, buscando reposo; y no hallándolo, dice: Me volveré á mi casa de donde salí.
Y viniendo, la halla barrida y adornada.
Entonces va, y toma otros siete espíritus peores que él; y entrados, habitan allí: y lo postrero del tal hombre es peor que lo primero.
Y aconteció que diciendo estas cosas, una mujer de la compañía, levantando la voz, le dijo: Bienaventurado el vientre que te trajo, y los pechos que mamaste.
Y él dijo: Antes bienaventurados los que oyen la palabra de Dios, y la guardan.
Y juntándose las gentes á él, comenzó á decir: Esta generación mala es: señal busca, mas señal no le será dada, sino la señal de Jonás.
Porque como Jonás fué señal á los Ninivitas, así también será el Hijo del hombre á esta generación.
La reina del Austro se levantará en juicio con los hombres de esta generación, y los condenará; porque vino de los fines de la tierra á oir la sabiduría de Salomón; y he aquí más que Salomón en este lugar.
Los hombres de Nínive se levantarán en juicio con esta generación, y la condenarán; porque á la predicación de Jonás se arrepintieron; y he aquí más que Jonás en este lugar.
Nadie pone en oculto la antorcha encendida, ni debajo del almud, sino en el candelero, para que los que entran vean la luz.
La antorcha del cuerpo es el ojo: pues si tu ojo fuere simple, también todo tu cuerpo será resplandeciente; mas si fuere malo, también tu cuerpo será tenebroso.
Mira pues, si la lumbre que en ti hay, es tinieblas.
Así que, siendo todo tu cuerpo resplandeciente, no teniendo alguna parte de tinieblas, será todo luminoso, como cuando una antorcha de resplandor te alumbra.
Y luego que hubo hablado, rogóle un Fariseo que comiese con él: y entrado Jesús, se sentó á la mesa.
Y el Fariseo, como lo vió, maravillóse de que no se lavó antes de comer.
Y el Señor le dijo: Ahora vosotros los Fariseos lo de fuera del vaso y del plato limpiáis; mas lo interior de vosotros está lleno de rapiña y de maldad.
Necios, ¿el que hizo lo de fuera, no hizo también lo de dentro?
Empero de lo que os resta, dad limosna; y he aquí todo os será limpio.
Mas ¡ay de vosotros, Fariseos! que diezmáis la menta, y la ruda, y toda hortaliza; mas el juicio y la caridad de Dios pasáis de largo. Pues estas cosas era necesario hacer, y no dejar las otras.
¡Ay de vosotros, Fariseos! que amáis las primeras sillas en las sinagogas, y las salutaciones en las plazas.
¡Ay de vosotros, escribas y Fariseos, hipócritas! que sois como sepulcros que no se ven, y los hombres que andan encima no lo saben.
Y respondiendo uno de los doctores de la ley, le dice: Maestro, cuando dices esto, también nos afrentas á nosotros.
Y él dijo: ¡Ay de vosotros también, doctores de la ley! que cargáis á los hombres con cargas que no pueden llevar; mas vosotros ni aun con un dedo tocáis las cargas.
¡Ay de vosotros! que edificáis los sepulcros de los profetas, y los mataron vuestros padres.
De cierto dais testimonio que consentís en los hechos de vuestros padres; porque á la verdad ellos los mataron, mas vosotros edificáis sus sepulcros.
Por tanto, la sabiduría de Dios también dijo: Enviaré á ellos profetas y apóstoles; y de ellos á unos matarán y á otros perseguirán;
Para que de esta generación sea demandada la sangre de todos los profetas, que ha sido derramada desde la fundación del mundo;
Desde la sangre de Abel, hasta la sangre de Zacarías, que murió entre el altar y el templo: así os digo, será demandada de esta generación.
¡Ay de vosotros, doctores de la ley! que habéis quitado la llave de la ciencia; vosotros mismos no entrasteis, y á los que entraban impedisteis.
Y diciéndoles estas cosas, los escribas y los Fariseos comenzaron á apretar le en gran manera, y á provocarle á que hablase de muchas cosas;
Acechándole, y procurando cazar algo de su boca para acusarle.
Y mirando, vió á los ricos que echaban sus ofrendas en el gazofilacio.
Y vió también una viuda pobrecilla, que echaba allí dos blancas.
Y dijo: De verdad os digo, que esta pobre viuda echó más que todos:
Porque todos estos, de lo que les sobra echaron para las ofrendas de Dios; mas ésta de su pobreza echó todo el sustento que tenía.
Y á unos que decían del templo, que estaba adornado de hermosas piedras y dones, dijo:
Estas cosas que veis, días vendrán que no quedará piedra sobre piedra que no sea destruída.
Y le preguntaron, diciendo: Maestro, ¿cuándo será esto? ¿y qué señal habrá cuando estas cosas hayan de comenzar á ser hechas?
El entonces dijo: Mirad, no seáis engañados; porque vendrán muchos en mi nombre, diciendo: Yo soy; y, El tiempo está cerca: por tanto, no vayáis en pos de ellos.
Empero cuando oyereis guerras y sediciones, no os espantéis; porque es necesario que estas cosas acontezcan primero: mas no luego será el fin.
Entonces les dijo: Se levantará gente contra gente, y reino contra reino;
Y habrá grandes terremotos, y en varios lugares hambres y pestilencias: y habrá espantos y grandes señales del cielo.
Mas antes de todas estas cosas os echarán mano, y perseguirán, entregándoos á las sinagogas y á las cárceles, siendo llevados á los reyes y á los gobernadores por causa de mi nombre.
Y os será para testimonio.
Poned pues en vuestros corazones no pensar antes cómo habéis de responder:
Porque yo os daré boca y sabiduría, á la cual no podrán resistir ni contradecir todos los que se os opondrán.
Mas seréis entregados aun de vuestros padres, y hermanos, y parientes, y amigos; y matarán á algunos de vosotros.
Y seréis aborrecidos de todos por causa de mi nombre.
Mas un pelo de vuestra cabeza no perecerá.
En vuestra paciencia poseeréis vuestras almas.
Y cuando viereis á Jerusalem cercada de ejércitos, sabed entonces que su destrucción ha llegado.
Entonces los que estuvieren en Judea, huyan á los montes; y los que en medio de ella, váyanse; y los que estén en los campos, no entren en ella.
Porque estos son días de venganza: para que se cumplan todas las cosas que están escritas.
Mas ¡ay de las preñadas, y de las que crían en aquellos días! porque habrá apuro grande sobre la tierra é ira en este pueblo.
Y caerán á filo de espada, y serán llevados cautivos á todas las naciones: y Jerusalem será hollada de las gentes, hasta que los tiempos de las gentes sean cumplidos.
Entonces habrá señales en el sol, y en la luna, y en las estrellas; y en la tierra angustia de gentes por la confusión del sonido de la mar y de las ondas:
Secándose los hombres á causa del temor y expectación de las cosas que sobrevendrán á la redondez de la tierra: porque las virtudes de los cielos serán conmovidas.
Y entonces verán al Hijo del hombre, que vendrá en una nube con potestad y majestad grande.
Y cuando estas cosas comenzaren á hacerse, mirad, y levantad vuestras cabezas, porque vuestra redención está cerca.
Y díjoles una parábola: Mirad la higuera y todos los árboles:
Cuando ya brotan, viéndolo, de vosotros mismos entendéis que el verano está ya cerca.
Así también vosotros, cuando viereis hacerse estas cosas, entended que está cerca el reino de Dios.
De cierto os digo, que no pasará esta generación hasta que todo sea hecho.
El cielo y la tierra pasarán; mas mis palabras no pasarán.
Y mirad por vosotros, que vuestros corazones no sean cargados de glotonería y embriaguez, y de los cuidados de esta vida, y venga de repente sobre vosotros aquel día.
Porque como un lazo vendrá sobre todos los que habitan sobre la faz de toda la tierra.
Velad pues, orando en todo tiempo, que seáis tenidos por dignos de evitar todas estas cosas que han de venir, y de estar en pie delante del Hijo del hombre.
Y enseñaba de día en el templo; y de noche saliendo, estábase en el monte que se llama de las Olivas.
Y todo el pueblo venía á él por la mañana, para oirle en el templo.
Y pasadas estas cosas andaba Jesús en Galilea: que no quería andar en Judea, porque los Judíos procuraban matarle.
Y estaba cerca la fiesta de los Judíos, la de los tabernáculos.
Y dijéronle sus hermanos: Pásate de aquí, y vete á Judea, para que también tus discípulos vean las obras que haces.
Que ninguno que procura ser claro, hace algo en oculto. Si estas cosas haces, manifiéstate al mundo.
Porque ni aun sus hermanos creían en él.
Díceles entonces Jesús: Mi tiempo aun no ha venido; mas vuestro tiempo siempre está presto.
No puede el mundo aborreceros á vosotros; mas á mí me aborrece, porque yo doy testimonio de él, que sus obras son malas.
Vosotros subid á esta fiesta; yo no subo aún á esta fiesta, porque mi tiempo aun no es cumplido.
Y habiéndoles dicho esto, quedóse en Galilea.
Mas como sus hermanos hubieron subido, entonces él también subió á la fiesta, no manifiestamente, sino como en secreto.
Y buscábanle los Judíos en la fiesta, y decían: ¿Dónde está aquél?
Y había grande murmullo de él entre la gente: porque unos decían: Bueno es; y otros decían: No, antes engaña á las gentes.
Mas ninguno hablaba abiertamente de él, por miedo de los Judíos.
Y al medio de la fiesta subió Jesús al templo, y enseñaba.
Y maravillábanse los Judíos, diciendo: ¿Cómo sabe éste letras, no habiendo aprendido?
Respondióles Jesús, y dijo: Mi doctrina no es mía, sino de aquél que me envió.
El que quisiere hacer su voluntad, conocerá de la doctrina si viene de Dios, ó si yo hablo de mí mismo.
El que habla de sí mismo, su propia gloria busca; mas el que busca la gloria del que le envió, éste es verdadero, y no hay en él injusticia.
¿No os dió Moisés la ley, y ninguno de vosotros hace la ley? ¿Por qué me procuráis matar?
Respondió la gente, y dijo: Demonio tienes: ¿quién te procura matar?
Jesús respondió, y díjoles: Una obra hice, y todos os maravilláis.
Cierto, Moisés os dió la circuncisión (no porque sea de Moisés, mas de los padres); y en sábado circuncidáis al hombre.
Si recibe el hombre la circuncisión en sábado, para que la ley de Moisés no sea quebrantada, ¿os enojáis conmigo porque en sábado hice sano todo un hombre?
No juzguéis según lo que parece, mas juzgad justo juicio.
Decían entonces unos de los de Jerusalem: ¿No es éste al que buscan para matarlo?
Y he aquí, habla públicamente, y no le dicen nada; ¿si habrán entendido verdaderamente los príncipes, que éste es el Cristo?
Mas éste, sabemos de dónde es: y cuando viniere el Cristo, nadie sabrá de dónde sea.
Entonces clamaba Jesús en el templo, enseñando y diciendo: Y á mí me conocéis, y sabéis de dónde soy; y no he venido de mí mismo; mas el que me envió es verdadero, al cual vosotros no conocéis.
Yo le conozco, porque de él soy, y él me envió.
Entonces procuraban prenderle; mas ninguno puso en él mano, porque aun no había venido su hora.
Y muchos del pueblo creyeron en él, y decían: El Cristo, cuando viniere, ¿hará más señales que las que éste hace?
Los Fariseos oyeron á la gente que murmuraba de él estas cosas; y los príncipes de los sacerdotes y los Fariseos enviaron servidores que le prendiesen.
Y Jesús dijo: Aun un poco de tiempo estaré con vosotros, é iré al que me envió.
Me buscaréis, y no me hallaréis; y donde yo estaré, vosotros no podréis venir.
Entonces los Judíos dijeron entre sí: ¿A dónde se ha de ir éste que no le hallemos? ¿Se ha de ir á los esparcidos entre los Griegos, y á enseñar á los Griegos?
¿Qué dicho es éste que dijo: Me buscaréis, y no me hallaréis; y donde yo estaré, vosotros no podréis venir?
Mas en el postrer día grande de la fiesta, Jesús se ponía en pie y clamaba, diciendo: Si alguno tiene sed, venga á mí y beba.
El que cree en mí, como dice la Escritura, ríos de agua viva correrán de su vientre.
(Y esto dijo del Espíritu que habían de recibir los que creyesen en él: pues aun no había venido el Espíritu Santo; porque Jesús no estaba aún glorificado.)
Entonces algunos de la multitud, oyendo este dicho, decían: Verdaderamente éste es el profeta.
Otros decían: Este es el Cristo. Algunos empero decían: ¿De Galilea ha de venir el Cristo?
¿No dice la Escritura, que de la simiente de David, y de la aldea de Bethlehem, de donde era David, vendrá el Cristo?
Así que había disensión entre la gente acerca de él.
Y algunos de ellos querían prenderle; mas ninguno echó sobre él manos.
Y los ministriles vinieron á los principales sacerdotes y á los Fariseos; y ellos les dijeron: ¿Por qué no le trajisteis?
Los ministriles respondieron: Nunca ha hablado hombre así como este hombre.
Entonces los Fariseos les respondieron: ¿Estáis también vosotros engañados?
¿Ha creído en él alguno de los príncipes, ó de los Fariseos?
Mas estos comunales que no saben la ley, malditos son.
Díceles Nicodemo (el que vino á él de noche, el cual era uno de ellos):
¿Juzga nuestra ley á hombre, si primero no oyere de él, y entendiere lo que ha hecho?
Respondieron y dijéronle: ¿Eres tú también Galileo? Escudriña y ve que de Galilea nunca se levantó profeta.
Y fuése cada uno á su casa.
Estas cosas habló Jesús, y levantados los ojos al cielo, dijo: Padre, la hora es llegada; glorifica á tu Hijo, para que también tu Hijo te glorifique á ti;
Como le has dado la potestad de toda carne, para que dé vida eterna á todos los que le diste.
Esta empero es la vida eterna: que te conozcan el solo Dios verdadero, y á Jesucristo, al cual has enviado.
Yo te he glorificado en la tierra: he acabado la obra que me diste que hiciese.
Ahora pues, Padre, glorifícame tú cerca de ti mismo con aquella gloria que tuve cerca de ti antes que el mundo fuese.
He manifestado tu nombre á los hombres que del mundo me diste: tuyos eran, y me los diste, y guardaron tu palabra.
Ahora han conocido que todas las cosas que me diste, son de ti;
Porque las palabras que me diste, les he dado; y ellos las recibieron, y han conocido verdaderamente que salí de ti, y han creído que tú me enviaste.
Yo ruego por ellos: no ruego por el mundo, sino por los que me diste; porque tuyos son:
Y todas mis cosas son tus cosas, y tus cosas son mis cosas: y he sido glorificado en ellas.
Y ya no estoy en el mundo; mas éstos están en el mundo, y yo á ti vengo. Padre santo, á los que me has dado, guárdalos por tu nombre, para que sean una cosa, como también nosotros.
Cuando estaba con ellos en el mundo, yo los guardaba en tu nombre; á los que me diste, yo los guardé, y ninguno de ellos se perdió, sino el hijo de perdición; para que la Escritura se cumpliese.
Mas ahora vengo á ti; y hablo esto en el mundo, para que tengan mi gozo cumplido en sí mismos.
Yo les he dado tu palabra; y el mundo los aborreció, porque no son del mundo, como tampoco yo soy del mundo.
No ruego que los quites del mundo, sino que los guardes del mal.
No son del mundo, como tampoco yo soy del mundo.
Santifícalos en tu verdad: tu palabra es verdad.
Como tú me enviaste al mundo, también los he enviado al mundo.
Y por ellos yo me santifico á mí mismo, para que también ellos sean santificados en verdad.
Mas no ruego solamente por éstos, sino también por los que han de creer en mí por la palabra de ellos.
Para que todos sean una cosa; como tú, oh Padre, en mí, y yo en ti, que también ellos sean en nosotros una cosa: para que el mundo crea que tú me enviaste.
Y yo, la gloria que me diste les he dado; para que sean una cosa, como también nosotros somos una cosa.
Yo en ellos, y tú en mí, para que sean consumadamente una cosa; que el mundo conozca que tú me enviaste, y que los has amado, como también á mí me has amado.
Padre, aquellos que me has dado, quiero que donde yo estoy, ellos estén también conmigo; para que vean mi gloria que me has dado: por cuanto me has amado desde antes de la constitución del mundo.
Padre justo, el mundo no te ha conocido, mas yo te he conocido; y éstos han conocido que tú me enviaste;
Y yo les he manifestado tu nombre, y manifestaré lo aún; para que el amor con que me has amado, esté en ellos, y yo en ellos.
En aquellos días, creciendo el número de los discípulos, hubo murmuración de los Griegos contra los Hebreos, de que sus viudas eran menospreciadas en el ministerio cotidiano.
Así que, los doce convocaron la multitud de los discípulos, y dijeron: No es justo que nosotros dejemos la palabra de Dios, y sirvamos á las mesas.
Buscad pues, hermanos, siete varones de vosotros de buen testimonio, llenos de Espíritu Santo y de sabiduría, los cuales pongamos en esta obra.
Y nosotros persistiremos en la oración, y en el ministerio de la palabra.
Y plugo el parecer á toda la multitud; y eligieron á Esteban, varón lleno de fe y de Espíritu Santo, y á Felipe, y á Prócoro, y á Nicanor, y á Timón, y á Parmenas, y á Nicolás, prosélito de Antioquía:
A estos presentaron delante de los apóstoles, los cuales orando les pusieron las manos encima.
Y crecía la palabra del Señor, y el número de los discípulos se multiplicaba mucho en Jerusalem: también una gran multitud de los sacerdotes obedecía á la fe.
Empero Esteban, lleno de gracia y de potencia, hacía prodigios y milagros grandes en el pueblo.
Levantáronse entonces unos de la sinagoga que se llama de los Libertinos, y Cireneos, y Alejandrinos, y de los de Cilicia, y de Asia, disputando con Esteban.
Mas no podían resistir á la sabiduría y al Espíritu con que hablaba.
Entonces sobornaron á unos que dijesen que le habían oído hablar palabras blasfemas contra Moisés y Dios.
Y conmovieron al pueblo, y á los ancianos, y á los escribas; y arremetiendo le arrebataron, y le trajeron al concilio.
Y pusieron testigos falsos, que dijesen: Este hombre no cesa de hablar palabras blasfemas contra este lugar santo y la ley:
Porque le hemos oído decir, que este Jesús de Nazaret destruirá este lugar, y mudará las ordenanzas que nos dió Moisés.
Entonces todos los que estaban sentados en el concilio, puestos los ojos en él, vieron su rostro como el rostro de un ángel.
Después llegó á Derbe, y á Listra: y he aquí, estaba allí un discípulo llamado Timoteo, hijo de una mujer Judía fiel, mas de padre Griego.
De éste daban buen testimonio los hermanos que estaban en Listra y en Iconio.
Este quiso Pablo que fuese con él; y tomándole, le circuncidó por causa de los Judíos que estaban en aquellos lugares; porque todos sabían que su padre era Griego.
Y como pasaban por las ciudades, les daban que guardasen los decretos que habían sido determinados por los apóstoles y los ancianos que estaban en Jerusalem.
Así que, las iglesias eran confirmadas en fe, y eran aumentadas en número cada día.
Y pasando á Phrygia y la provincia de Galacia, les fué prohibido por el Espíritu Santo hablar la palabra en Asia.
Y como vinieron á Misia, tentaron de ir á Bithynia; mas el Espíritu no les dejó.
Y pasando á Misia, descendieron á Troas.
Y fué mostrada á Pablo de noche una visión: Un varón Macedonio se puso delante, rogándole, y diciendo: Pasa á Macedonia, y ayúdanos.
Y como vió la visión, luego procuramos partir á Macedonia, dando por cierto que Dios nos llamaba para que les anunciásemos el evangelio.
Partidos pues de Troas, vinimos camino derecho á Samotracia, y el día siguiente á Neápolis;
Y de allí á Filipos, que es la primera ciudad de la parte de Macedonia, y una colonia; y estuvimos en aquella ciudad algunos días.
Y un día de sábado salimos de la puerta junto al río, donde solía ser la oración; y sentándonos, hablamos á las mujeres que se habían juntado.
Entonces una mujer llamada Lidia, que vendía púrpura en la ciudad de Tiatira, temerosa de Dios, estaba oyendo; el corazón de la cual abrió el Señor para que estuviese atenta á lo que Pablo decía.
Y cuando fué bautizada, y su familia, nos rogó, diciendo: Si habéis juzgado que yo sea fiel al Señor, entrad en mi casa, y posad: y constriñónos.
Y aconteció, que yendo nosotros á la oración, una muchacha que tenía espíritu pitónico, nos salió al encuentro, la cual daba grande ganancia á sus amos adivinando.
Esta, siguiendo á Pablo y á nosotros, daba voces, diciendo: Estos hombres son siervos del Dios Alto, los cuales os anuncian el camino de salud.
Y esto hacía por muchos días; mas desagradando á Pablo, se volvió y dijo al espíritu: Te mando en el nombre de Jesucristo, que salgas de ella. Y salió en la misma hora.
Y viendo sus amos que había salido la esperanza de su ganancia, prendieron á Pablo y á Silas, y los trajeron al foro, al magistrado;
Y presentándolos á los magistrados, dijeron: Estos hombres, siendo Judíos, alborotan nuestra ciudad,
Y predican ritos, los cuales no nos es lícito recibir ni hacer, pues somos Romanos.
Y agolpóse el pueblo contra ellos: y los magistrados rompiéndoles sus ropas, les mandaron azotar con varas.
Y después que los hubieron herido de muchos azotes, los echaron en la cárcel, mandando al carcelero que los guardase con diligencia:
El cual, recibido este mandamiento, los metió en la cárcel de más adentro; y les apretó los pies en el cepo.
Mas á media noche, orando Pablo y Silas, cantaban himnos á Dios: y los que estaban presos los oían.
Entonces fué hecho de repente un gran terremoto, de tal manera que los cimientos de la cárcel se movían; y luego todas las puertas se abrieron, y las prisiones de todos se soltaron.
Y despertado el carcelero, como vió abiertas las puertas de la cárcel, sacando la espada se quería matar, pensando que los presos se habían huído.
Mas Pablo clamó á gran voz, diciendo: No te hagas ningún mal; que todos estamos aquí.
El entonces pidiendo luz, entró dentro, y temblando, derribóse á los pies de Pablo y de Silas;
Y sacándolos fuera, les dice: Señores, ¿qué es menester que yo haga para ser salvo?
Y ellos dijeron: Cree en el Señor Jesucristo, y serás salvo tú, y tu casa.
Y le hablaron la palabra del Señor, y á todos los que estaban en su casa.
Y tomándolos en aquella misma hora de la noche, les lavó los azotes; y se bautizó luego él, y todos los suyos.
Y llevándolos á su casa, les puso la mesa: y se gozó de que con toda su casa había creído á Dios.
Y como fué de día, los magistrados enviaron los alguaciles, diciendo: Deja ir á aquellos hombres.
Y el carcelero hizo saber estas palabras á Pablo: Los magistrados han enviado á decir que seáis sueltos: así que ahora salid, é id en paz.
Entonces Pablo les dijo: Azotados públicamente sin ser condenados, siendo hombres Romanos, nos echaron en la cárcel; y ¿ahora nos echan encubiertamente? No, de cierto, sino vengan ellos y sáquennos.
Y los alguaciles volvieron á decir á los magistrados estas palabras: y tuvieron miedo, oído que eran Romanos.
Y viniendo, les rogaron; y sacándolos, les pidieron que se saliesen de la ciudad.
Entonces salidos de la cárcel, entraron en casa de Lidia; y habiendo visto á los hermanos, los consolaron, y se salieron.
Entonces Agripa dijo á Pablo: Se te permite hablar por ti mismo. Pablo entonces, extendiendo la mano, comenzó á responder por sí, diciendo:
Acerca de todas las cosas de que soy acusado por los Judíos, oh rey Agripa, me tengo por dichoso de que haya hoy de defenderme delante de ti;
Mayormente sabiendo tú todas las costumbres y cuestiones que hay entre los Judíos: por lo cual te ruego que me oigas con paciencia.
Mi vida pues desde la mocedad, la cual desde el principio fué en mi nación, en Jerusalem, todos los Judíos la saben:
Los cuales tienen ya conocido que yo desde el principio, si quieren testificarlo, conforme á la más rigurosa secta de nuestra religión he vivido Fariseo.
Y ahora, por la esperanza de la promesa que hizo Dios á nuestros padres, soy llamado en juicio;
A la cual promesa nuestras doce tribus, sirviendo constantemente de día y de noche, esperan que han de llegar. Por la cual esperanza, oh rey Agripa, soy acusado de los Judíos.
¡Qué! ¿Júzgase cosa increíble entre vosotros que Dios resucite los muertos?
Yo ciertamente había pensado deber hacer muchas cosas contra el nombre de Jesús de Nazaret:
Lo cual también hice en Jerusalem, y yo encerré en cárceles á muchos de los santos, recibida potestad de los príncipes de los sacerdotes; y cuando eran matados, yo dí mi voto.
Y muchas veces, castigándolos por todas las sinagogas, los forcé á blasfemar; y enfurecido sobremanera contra ellos, los perseguí hasta en las ciudades extrañas.
En lo cual ocupado, yendo á Damasco con potestad y comisión de los príncipes de los sacerdotes,
En mitad del día, oh rey, vi en el camino una luz del cielo, que sobrepujaba el resplandor del sol, la cual me rodeó y á los que iban conmigo.
Y habiendo caído todos nosotros en tierra, oí una voz que me hablaba, y decía en lengua hebraica: Saulo, Saulo, ¿por qué me persigues? Dura cosa te es dar coces contra los aguijones.
Yo entonces dije: ¿Quién eres, Señor? Y el Señor dijo: Yo soy Jesús, á quien tú persigues.
Mas levántate, y ponte sobre tus pies; porque para esto te he aparecido, para ponerte por ministro y testigo de las cosas que has visto, y de aquellas en que apareceré á ti:
Librándote del pueblo y de los Gentiles, á los cuales ahora te envío,
Para que abras sus ojos, para que se conviertan de las tinieblas á la luz, y de la potestad de Satanás á Dios; para que reciban, por la fe que es en mí, remisión de pecados y suerte entre los santificados.
Por lo cual, oh rey Agripa, no fuí rebelde á la visión celestial:
Antes anuncié primeramente á los que están en Damasco, y Jerusalem, y por toda la tierra de Judea, y á los Gentiles, que se arrepintiesen y se convirtiesen á Dios, haciendo obras dignas de arrepentimiento.
Por causa de esto los Judíos, tomándome en el templo, tentaron matarme.
Mas ayudado del auxilio de Dios, persevero hasta el día de hoy, dando testimonio á pequeños y á grandes, no diciendo nada fuera de las cosas que los profetas y Moisés dijeron que habían de venir:
Que Cristo había de padecer, y ser el primero de la resurrección de los muertos, para anunciar luz al pueblo y á los Gentiles.
Y diciendo él estas cosas en su defensa, Festo á gran voz dijo: Estás loco, Pablo: las muchas letras te vuelven loco.
Mas él dijo: No estoy loco, excelentísimo Festo, sino que hablo palabras de verdad y de templanza.
Pues el rey sabe estas cosas, delante del cual también hablo confiadamente. Pues no pienso que ignora nada de esto; pues no ha sido esto hecho en algún rincón.
¿Crees, rey Agripa, á los profetas? Yo sé que crees.
Entonces Agripa dijo á Pablo: Por poco me persuades á ser Cristiano.
Y Pablo dijo: ¡Pluguiese á Dios que por poco ó por mucho, no solamente tú, mas también todos los que hoy me oyen, fueseis hechos tales cual yo soy, excepto estas prisiones!
Y como hubo dicho estas cosas, se levantó el rey, y el presidente, y Bernice, y los que se habían sentado con ellos;
Y como se retiraron aparte, hablaban los unos á los otros, diciendo: Ninguna cosa digna ni de muerte, ni de prisión, hace este hombre.
Y Agripa dijo á Festo: Podía este hombre ser suelto, si no hubiera apelado á César.
