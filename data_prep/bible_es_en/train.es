Libro de la generación de Jesucristo, hijo de David, hijo de Abraham.
Abraham engendró á Isaac: é Isaac engendró á Jacob: y Jacob engendró á Judas y á sus hermanos:
Y Judas engendró de Thamar á Phares y á Zara: y Phares engendró á Esrom: y Esrom engendró á Aram:
Y Aram engendró á Aminadab: y Aminadab engendró á Naassón: y Naassón engendró á Salmón:
Y Salmón engendró de Rachâb á Booz, y Booz engendró de Ruth á Obed: y Obed engendró á Jessé:
Y Jessé engendró al rey David: y el rey David engendró á Salomón de la que fué mujer de Urías:
Y Salomón engendró á Roboam: y Roboam engendró á Abía: y Abía engendró á Asa:
Y Asa engendró á Josaphat: y Josaphat engendró á Joram: y Joram engendró á Ozías:
Y Ozías engendró á Joatam: y Joatam engendró á Achâz: y Achâz engendró á Ezechîas:
Y Ezechîas engendró á Manasés: y Manasés engendró á Amón: y Amón engendró á Josías:
Y Josías engendró á Jechônías y á sus hermanos, en la transmigración de Babilonia.
Y después de la transmigración de Babilonia, Jechônías engendró á Salathiel: y Salathiel engendró á Zorobabel:
Y Zorobabel engendró á Abiud: y Abiud engendró á Eliachîm: y Eliachîm engendró á Azor:
Y Azor engendró á Sadoc: y Sadoc engendró á Achîm: y Achîm engendró á Eliud:
Y Eliud engendró á Eleazar: y Eleazar engendró á Mathán: y Mathán engendró á Jacob:
Y Jacob engendró á José, marido de María, de la cual nació Jesús, el cual es llamado el Cristo.
De manera que todas las generaciones desde Abraham hasta David son catorce generaciones: y desde David hasta la transmigración de Babilonia, catorce generaciones: y desde la transmigración de Babilonia hasta Cristo, catorce generaciones.
Y el nacimiento de Jesucristo fué así: Que siendo María su madre desposada con José, antes que se juntasen, se halló haber concebido del Espíritu Santo.
Y José su marido, como era justo, y no quisiese infamarla, quiso dejarla secretamente.
Y pensando él en esto, he aquí el ángel del Señor le aparece en sueños, diciendo: José, hijo de David, no temas de recibir á María tu mujer, porque lo que en ella es engendrado, del Espíritu Santo es.
Y parirá un hijo, y llamarás su nombre JESUS, porque él salvará á su pueblo de sus pecados.
Todo esto aconteció para que se cumpliese lo que fué dicho por el Señor, por el profeta que dijo:
He aquí la virgen concebirá y parirá un hijo, y llamarás su nombre Emmanuel, que declarado, es: Con nosotros Dios.
Y despertando José del sueño, hizo como el ángel del Señor le había mandado, y recibió á su mujer.
Y no la conoció hasta que parió á su hijo primogénito: y llamó su nombre JESUS.
Y como fué nacido Jesús en Bethlehem de Judea en días del rey Herodes, he aquí unos magos vinieron del oriente á Jerusalem,
Diciendo: ¿Dónde está el Rey de los Judíos, que ha nacido? porque su estrella hemos visto en el oriente, y venimos á adorarle.
Y oyendo esto el rey Herodes, se turbó, y toda Jerusalem con él.
Y convocados todos los príncipes de los sacerdotes, y los escribas del pueblo, les preguntó dónde había de nacer el Cristo.
Y ellos le dijeron: En Bethlehem de Judea; porque así está escrito por el profeta:
Y tú, Bethlehem, de tierra de Judá, no eres muy pequeña entre los príncipes de Judá; porque de ti saldrá un guiador, que apacentará á mi pueblo Israel.
Entonces Herodes, llamando en secreto á los magos, entendió de ellos diligentemente el tiempo del aparecimiento de la estrella;
Y enviándolos á Bethlehem, dijo: Andad allá, y preguntad con diligencia por el niño; y después que le hallareis, hacédmelo saber, para que yo también vaya y le adore.
Y ellos, habiendo oído al rey, se fueron: y he aquí la estrella que habían visto en el oriente, iba delante de ellos, hasta que llegando, se puso sobre donde estaba el niño.
Y vista la estrella, se regocijaron con muy grande gozo.
Y entrando en la casa, vieron al niño con su madre María, y postrándose, le adoraron; y abriendo sus tesoros, le ofrecieron dones, oro é incienso y mirra.
Y siendo avisados por revelación en sueños que no volviesen á Herodes, se volvieron á su tierra por otro camino.
Y partidos ellos, he aquí el ángel del Señor aparece en sueños á José, diciendo: Levántate, y toma al niño y á su madre, y huye á Egipto, y estáte allá hasta que yo te lo diga; porque ha de acontecer, que Herodes buscará al niño para matarlo.
Y él despertando, tomó al niño y á su madre de noche, y se fué á Egipto;
Y estuvo allá hasta la muerte de Herodes: para que se cumpliese lo que fué dicho por el Señor, por el profeta que dijo: De Egipto llamé á mi Hijo.
Herodes entonces, como se vió burlado de los magos, se enojó mucho, y envió, y mató á todos los niños que había en Bethlehem y en todos sus términos, de edad de dos años abajo, conforme al tiempo que había entendido de los magos.
Entonces fué cumplido lo que se había dicho por el profeta Jeremías, que dijo:
Voz fué oída en Ramá, grande lamentación, lloro y gemido: Rachêl que llora sus hijos; y no quiso ser consolada, porque perecieron.
Mas muerto Herodes, he aquí el ángel del Señor aparece en sueños á José en Egipto,
Diciendo: Levántate, y toma al niño y á su madre, y vete á tierra de Israel; que muertos son los que procuraban la muerte del niño.
Entonces él se levantó, y tomó al niño y á su madre, y se vino á tierra de Israel.
Y oyendo que Archelao reinaba en Judea en lugar de Herodes su padre, temió ir allá: mas amonestado por revelación en sueños, se fué á las partes de Galilea.
Y vino, y habitó en la ciudad que se llama Nazaret: para que se cumpliese lo que fué dicho por los profetas, que había de ser llamado Nazareno.
Y en aquellos días vino Juan el Bautista predicando en el desierto de Judea,
Y diciendo: Arrepentíos, que el reino de los cielos se ha acercado.
Porque éste es aquel del cual fué dicho por el profeta Isaías, que dijo: Voz de uno que clama en el desierto: Aparejad el camino del Señor, enderezad sus veredas.
Y tenía Juan su vestido de pelos de camellos, y una cinta de cuero alrededor de sus lomos; y su comida era langostas y miel silvestre.
Entonces salía á él Jerusalem, y toda Judea, y toda la provincia de alrededor del Jordán;
Y eran bautizados de él en el Jordán, confesando sus pecados.
Y viendo él muchos de los Fariseos y de los Saduceos, que venían á su bautismo, decíales: Generación de víboras, ¿quién os ha enseñado á huir de la ira que vendrá?
Haced pues frutos dignos de arrepentimiento,
Y no penséis decir dentro de vosotros: A Abraham tenemos por padre: porque yo os digo, que puede Dios despertar hijos á Abraham aun de estas piedras.
Ahora, ya también la segur está puesta á la raíz de los árboles; y todo árbol que no hace buen fruto, es cortado y echado en el fuego.
Yo á la verdad os bautizo en agua para arrepentimiento; mas el que viene tras mí, más poderoso es que yo; los zapatos del cual yo no soy digno de llevar; él os bautizará en Espíritu Santo y en fuego.
Su aventador en su mano está, y aventará su era: y allegará su trigo en el alfolí, y quemará la paja en fuego que nunca se apagará.
Entonces Jesús vino de Galilea á Juan al Jordán, para ser bautizado de él.
Mas Juan lo resistía mucho, diciendo: Yo he menester ser bautizado de ti, ¿y tú vienes á mí?
Empero respondiendo Jesús le dijo: Deja ahora; porque así nos conviene cumplir toda justicia. Entonces le dejó.
Y Jesús, después que fué bautizado, subió luego del agua; y he aquí los cielos le fueron abiertos, y vió al Espíritu de Dios que descendía como paloma, y venía sobre él.
Y he aquí una voz de los cielos que decía: Este es mi Hijo amado, en el cual tengo contentamiento.
Entonces Jesús fué llevado del Espíritu al desierto, para ser tentado del diablo.
Y habiendo ayunado cuarenta días y cuarenta noches, después tuvo hambre.
Y llegándose á él el tentador, dijo: Si eres Hijo de Dios, di que estas piedras se hagan pan.
Mas él respondiendo, dijo: Escrito está: No con solo el pan vivirá el hombre, mas con toda palabra que sale de la boca de Dios.
Entonces el diablo le pasa á la santa ciudad, y le pone sobre las almenas del templo,
Y le dice: Si eres Hijo de Dios, échate abajo; que escrito está: A sus ángeles mandará por ti, y te alzarán en las manos, para que nunca tropieces con tu pie en piedra.
Jesús le dijo: Escrito está además: No tentarás al Señor tu Dios.
Otra vez le pasa el diablo á un monte muy alto, y le muestra todos los reinos del mundo, y su gloria,
Y dícele: Todo esto te daré, si postrado me adorares.
Entonces Jesús le dice: Vete, Satanás, que escrito está: Al Señor tu Dios adorarás y á él solo servirás.
El diablo entonces le dejó: y he aquí los ángeles llegaron y le servían.
Mas oyendo Jesús que Juan era preso, se volvió á Galilea;
Y dejando á Nazaret, vino y habitó en Capernaum, ciudad marítima, en los confines de Zabulón y de Nephtalim:
Para que se cumpliese lo que fué dicho por el profeta Isaías, que dijo:
La tierra de Zabulón, y la tierra de Nephtalim, camino de la mar, de la otra parte del Jordán, Galilea de los Gentiles;
El pueblo asentado en tinieblas, vió gran luz; y á los sentados en región y sombra de muerte, luz les esclareció.
Desde entonces comenzó Jesús á predicar, y á decir: Arrepentíos, que el reino de los cielos se ha acercado.
Y andando Jesús junto á la mar de Galilea, vió á dos hermanos, Simón, que es llamado Pedro, y Andrés su hermano, que echaban la red en la mar; porque eran pescadores.
Y díceles: Venid en pos de mí, y os haré pescadores de hombres.
Ellos entonces, dejando luego las redes, le siguieron.
Y pasando de allí vió otros dos hermanos, Jacobo, hijo de Zebedeo, y Juan su hermano, en el barco con Zebedeo, su padre, que remendaban sus redes; y los llamó.
Y ellos, dejando luego el barco y á su padre, le siguieron.
Y rodeó Jesús toda Galilea, enseñando en las sinagogas de ellos, y predicando el evangelio del reino, y sanando toda enfermedad y toda dolencia en el pueblo.
Y corría su fama por toda la Siria; y le trajeron todos los que tenían mal: los tomados de diversas enfermedades y tormentos, y los endemoniados, y lunáticos, y paralíticos, y los sanó.
Y le siguieron muchas gentes de Galilea y de Decápolis y de Jerusalem y de Judea y de la otra parte del Jordán.
Mirad que no hagáis vuestra justicia delante de los hombres, para ser vistos de ellos: de otra manera no tendréis merced de vuestro Padre que está en los cielos.
Cuando pues haces limosna, no hagas tocar trompeta delante de ti, como hacen los hipócritas en las sinagogas y en las plazas, para ser estimados de los hombres: de cierto os digo, que ya tienen su recompensa.
Mas cuando tú haces limosna, no sepa tu izquierda lo que hace tu derecha;
Para que sea tu limosna en secreto: y tu Padre que ve en secreto, él te recompensará en público.
Y cuando oras, no seas como los hipócritas; porque ellos aman el orar en las sinagogas, y en los cantones de las calles en pie, para ser vistos de los hombres: de cierto os digo, que ya tienen su pago.
Mas tú, cuando oras, éntrate en tu cámara, y cerrada tu puerta, ora á tu Padre que está en secreto; y tu Padre que ve en secreto, te recompensará en público.
Y orando, no seáis prolijos, como los Gentiles; que piensan que por su parlería serán oídos.
No os hagáis, pues, semejantes á ellos; porque vuestro Padre sabe de qué cosas tenéis necesidad, antes que vosotros le pidáis.
Vosotros pues, oraréis así: Padre nuestro que estás en los cielos, santificado sea tu nombre.
Venga tu reino. Sea hecha tu voluntad, como en el cielo, así también en la tierra.
Danos hoy nuestro pan cotidiano.
Y perdónanos nuestras deudas, como también nosotros perdonamos á nuestros deudores.
Y no nos metas en tentación, mas líbranos del mal: porque tuyo es el reino, y el poder, y la gloria, por todos los siglos. Amén.
Porque si perdonareis á los hombres sus ofensas, os perdonará también á vosotros vuestro Padre celestial.
Mas si no perdonareis á los hombres sus ofensas, tampoco vuestro Padre os perdonará vuestras ofensas.
Y cuando ayunáis, no seáis como los hipócritas, austeros; porque ellos demudan sus rostros para parecer á los hombres que ayunan: de cierto os digo, que ya tienen su pago.
Mas tú, cuando ayunas, unge tu cabeza y lava tu rostro;
Para no parecer á los hombres que ayunas, sino á tu Padre que está en secreto: y tu Padre que ve en secreto, te recompensará en público.
No os hagáis tesoros en la tierra, donde la polilla y el orín corrompe, y donde ladrones minan y hurtan;
Mas haceos tesoros en el cielo, donde ni polilla ni orín corrompe, y donde ladrones no minan ni hurtan:
Porque donde estuviere vuestro tesoro, allí estará vuestro corazón.
La lámpara del cuerpo es el ojo: así que, si tu ojo fuere sincero, todo tu cuerpo será luminoso:
Mas si tu ojo fuere malo, todo tu cuerpo será tenebroso. Así que, si la lumbre que en ti hay son tinieblas, ¿cuántas serán las mismas tinieblas?
Ninguno puede servir á dos señores; porque ó aborrecerá al uno y amará al otro, ó se llegará al uno y menospreciará al otro: no podéis servir á Dios y á Mammón.
Por tanto os digo: No os congojéis por vuestra vida, qué habéis de comer, ó qué habéis de beber; ni por vuestro cuerpo, qué habéis de vestir: ¿no es la vida más que el alimento, y el cuerpo que el vestido?
Mirad las aves del cielo, que no siembran, ni siegan, ni allegan en alfolíes; y vuestro Padre celestial las alimenta. ¿No sois vosotros mucho mejores que ellas?
Mas ¿quién de vosotros podrá, congojándose, añadir á su estatura un codo?
Y por el vestido ¿por qué os congojáis? Reparad los lirios del campo, cómo crecen; no trabajan ni hilan;
Mas os digo, que ni aun Salomón con toda su gloria fué vestido así como uno de ellos.
Y si la hierba del campo que hoy es, y mañana es echada en el horno, Dios la viste así, ¿no hará mucho más á vosotros, hombres de poca fe?
No os congojéis pues, diciendo: ¿Qué comeremos, ó qué beberemos, ó con qué nos cubriremos?
Porque los Gentiles buscan todas estas cosas: que vuestro Padre celestial sabe que de todas estas cosas habéis menester.
Mas buscad primeramente el reino de Dios y su justicia, y todas estas cosas os serán añadidas.
Así que, no os congojéis por el día de mañana; que el día de mañana traerá su fatiga: basta al día su afán.
No juzguéis, para que no seáis juzgados.
Porque con el juicio con que juzgáis, seréis juzgados; y con la medida con que medís, os volverán á medir.
Y ¿por qué miras la mota que está en el ojo de tu hermano, y no echas de ver la viga que está en tu ojo?
O ¿cómo dirás á tu hermano: Espera, echaré de tu ojo la mota, y he aquí la viga en tu ojo?
¡Hipócrita! echa primero la viga de tu ojo, y entonces mirarás en echar la mota del ojo de tu hermano.
No deis lo santo á los perros, ni echéis vuestras perlas delante de los puercos; porque no las rehuellen con sus pies, y vuelvan y os despedacen.
Pedid, y se os dará; buscad, y hallaréis; llamad, y se os abrirá.
Porque cualquiera que pide, recibe; y el que busca, halla; y al que llama, se abrirá.
¿Qué hombre hay de vosotros, á quien si su hijo pidiere pan, le dará una piedra?
¿Y si le pidiere un pez, le dará una serpiente?
Pues si vosotros, siendo malos, sabéis dar buenas dádivas á vuestros hijos, ¿cuánto más vuestro Padre que está en los cielos, dará buenas cosas á los que le piden?
Así que, todas las cosas que quisierais que los hombres hiciesen con vosotros, así también haced vosotros con ellos; porque esta es la ley y los profetas.
Entrad por la puerta estrecha: porque ancha es la puerta, y espacioso el camino que lleva á perdición, y muchos son los que entran por ella.
Porque estrecha es la puerta, y angosto el camino que lleva á la vida, y pocos son los que la hallan.
Y guardaos de los falsos profetas, que vienen á vosotros con vestidos de ovejas, mas de dentro son lobos rapaces.
Por sus frutos los conoceréis. ¿Cógense uvas de los espinos, ó higos de los abrojos?
Así, todo buen árbol lleva buenos frutos; mas el árbol maleado lleva malos frutos.
No puede el buen árbol llevar malos frutos, ni el árbol maleado llevar frutos buenos.
Todo árbol que no lleva buen fruto, córtase y échase en el fuego.
Así que, por sus frutos los conoceréis.
No todo el que me dice: Señor, Señor, entrará en el reino de los cielos: mas el que hiciere la voluntad de mi Padre que está en los cielos.
Muchos me dirán en aquel día: Señor, Señor, ¿no profetizamos en tu nombre, y en tu nombre lanzamos demonios, y en tu nombre hicimos muchos milagros?
Y entonces les protestaré: Nunca os conocí; apartaos de mí, obradores de maldad.
Cualquiera, pues, que me oye estas palabras, y las hace, le compararé á un hombre prudente, que edificó su casa sobre la peña;
Y descendió lluvia, y vinieron ríos, y soplaron vientos, y combatieron aquella casa; y no cayó: porque estaba fundada sobre la peña.
Y cualquiera que me oye estas palabras, y no las hace, le compararé á un hombre insensato, que edificó su casa sobre la arena;
Y descendió lluvia, y vinieron ríos, y soplaron vientos, é hicieron ímpetu en aquella casa; y cayó, y fué grande su ruina.
Y fué que, como Jesús acabó estas palabras, las gentes se admiraban de su doctrina;
Porque les enseñaba como quien tiene autoridad, y no como los escribas.
Y como descendió del monte, le seguían muchas gentes.
Y he aquí un leproso vino, y le adoraba, diciendo: Señor, si quisieres, puedes limpiarme.
Y extendiendo Jesús su mano, le tocó, diciendo: Quiero; sé limpio. Y luego su lepra fué limpiada.
Entonces Jesús le dijo: Mira, no lo digas á nadie; mas ve, muéstrate al sacerdote, y ofrece el presente que mandó Moisés, para testimonio á ellos.
Y entrando Jesús en Capernaum, vino á él un centurión, rogándole,
Y diciendo: Señor, mi mozo yace en casa paralítico, gravemente atormentado.
Y Jesús le dijo: Yo iré y le sanaré.
Y respondió el centurión, y dijo: Señor, no soy digno de que entres debajo de mi techado; mas solamente di la palabra, y mi mozo sanará.
Porque también yo soy hombre bajo de potestad, y tengo bajo de mí soldados: y digo á éste: Ve, y va; y al otro: Ven, y viene; y á mi siervo: Haz esto, y lo hace.
Y oyendo Jesús, se maravilló, y dijo á los que le seguían: De cierto os digo, que ni aun en Israel he hallado fe tanta.
Y os digo que vendrán muchos del oriente y del occidente, y se sentarán con Abraham, é Isaac, y Jacob, en el reino de los cielos:
Mas los hijos del reino serán echados á las tinieblas de afuera: allí será el lloro y el crujir de dientes.
Entonces Jesús dijo al centurión: Ve, y como creiste te sea hecho. Y su mozo fué sano en el mismo momento.
Y vino Jesús á casa de Pedro, y vió á su suegra echada en cama, y con fiebre.
Y tocó su mano, y la fiebre la dejó: y ella se levantó, y les servía.
Y como fué ya tarde, trajeron á él muchos endemoniados; y echó los demonios con la palabra, y sanó á todos los enfermos;
Para que se cumpliese lo que fué dicho por el profeta Isaías, que dijo: El mismo tomó nuestras enfermedades, y llevó nuestras dolencias.
Y viendo Jesús muchas gentes alrededor de sí, mandó pasar á la otra parte del lago.
Y llegándose un escriba, le dijo: Maestro, te seguiré á donde quiera que fueres.
Y Jesús le dijo: Las zorras tienen cavernas, y las aves del cielo nidos; mas el Hijo del hombre no tiene donde recueste su cabeza.
Y otro de sus discípulos le dijo: Señor, dame licencia para que vaya primero, y entierre á mi padre.
Y Jesús le dijo: Sígueme; deja que los muertos entierren á sus muertos.
Y entrando él en el barco, sus discípulos le siguieron.
Y he aquí, fué hecho en la mar un gran movimiento, que el barco se cubría de las ondas; mas él dormía.
Y llegándose sus discípulos, le despertaron, diciendo: Señor, sálvanos, que perecemos.
Y él les dice: ¿Por qué teméis, hombres de poca fe? Entonces, levantándose, reprendió á los vientos y á la mar; y fué grande bonanza.
Y los hombres se maravillaron, diciendo: ¿Qué hombre es éste, que aun los vientos y la mar le obedecen?
Y como él hubo llegado en la otra ribera al país de los Gergesenos, le vinieron al encuentro dos endemoniados que salían de los sepulcros, fieros en gran manera, que nadie podía pasar por aquel camino.
Y he aquí clamaron, diciendo: ¿Qué tenemos contigo, Jesús, Hijo de Dios? ¿has venido acá á molestarnos antes de tiempo?
Y estaba lejos de ellos un hato de muchos puercos paciendo.
Y los demonios le rogaron, diciendo: Si nos echas, permítenos ir á aquel hato de puercos.
Y les dijo: Id. Y ellos salieron, y se fueron á aquel hato de puercos: y he aquí, todo el hato de los puercos se precipitó de un despeñadero en la mar, y murieron en las aguas.
Y los porqueros huyeron, y viniendo á la ciudad, contaron todas las cosas, y lo que había pasado con los endemoniados.
Y he aquí, toda la ciudad salió á encontrar á Jesús: y cuando le vieron, le rogaban que saliese de sus términos.
Entonces entrando en el barco, pasó á la otra parte, y vino á su ciudad.
Y he aquí le trajeron un paralítico, echado en una cama: y viendo Jesús la fe de ellos, dijo al paralítico: Confía, hijo; tus pecados te son perdonados.
Y he aquí, algunos de los escribas decían dentro de sí: Este blasfema.
Y viendo Jesús sus pensamientos, dijo: ¿Por qué pensáis mal en vuestros corazones?
Porque, ¿qué es más fácil, decir: Los pecados te son perdonados; ó decir: Levántate, y anda?
Pues para que sepáis que el Hijo del hombre tiene potestad en la tierra de perdonar pecados, (dice entonces al paralítico): Levántate, toma tu cama, y vete á tu casa.
Entonces él se levantó y se fué á su casa.
Y las gentes, viéndolo, se maravillaron, y glorificaron á Dios, que había dado tal potestad á los hombres.
Y pasando Jesús de allí, vió á un hombre que estaba sentado al banco de los públicos tributos, el cual se llamaba Mateo; y dícele: Sígueme. Y se levantó, y le siguió.
Y aconteció que estando él sentado á la mesa en casa, he aquí que muchos publicanos y pecadores, que habían venido, se sentaron juntamente á la mesa con Jesús y sus discípulos.
Y viendo esto los Fariseos, dijeron á sus discípulos: ¿Por qué come vuestro Maestro con los publicanos y pecadores?
Y oyéndolo Jesús, les dijo: Los que están sanos no tienen necesidad de médico, sino los enfermos.
Andad pues, y aprended qué cosa es: Misericordia quiero, y no sacrificio: porque no he venido á llamar justos, sino pecadores á arrepentimiento.
Entonces los discípulos de Juan vienen á él, diciendo: ¿Por qué nosotros y los Fariseos ayunamos muchas veces, y tus discípulos no ayunan?
Y Jesús les dijo: ¿Pueden los que son de bodas tener luto entre tanto que el esposo está con ellos? mas vendrán días cuando el esposo será quitado de ellos, y entonces ayunarán.
Y nadie echa remiendo de paño recio en vestido viejo; porque el tal remiendo tira del vestido, y se hace peor la rotura.
Ni echan vino nuevo en cueros viejos: de otra manera los cueros se rompen, y el vino se derrama, y se pierden los cueros; mas echan el vino nuevo en cueros nuevos, y lo uno y lo otro se conserva juntamente.
Hablando él estas cosas á ellos, he aquí vino un principal, y le adoraba, diciendo: Mi hija es muerta poco ha: mas ven y pon tu mano sobre ella, y vivirá.
Y se levantó Jesús, y le siguió, y sus discípulos.
Y he aquí una mujer enferma de flujo de sangre doce años había, llegándose por detrás, tocó la franja de su vestido:
Porque decía entre sí: Si tocare solamente su vestido, seré salva.
Mas Jesús volviéndose, y mirándola, dijo: Confía, hija, tu fe te ha salvado. Y la mujer fué salva desde aquella hora.
Y llegado Jesús á casa del principal, viendo los tañedores de flautas, y la gente que hacía bullicio,
Díceles: Apartaos, que la muchacha no es muerta, mas duerme. Y se burlaban de él.
Y como la gente fué echada fuera, entró, y tomóla de la mano, y se levantó la muchacha.
Y salió esta fama por toda aquella tierra.
Y pasando Jesús de allí, le siguieron dos ciegos, dando voces y diciendo: Ten misericordia de nosotros, Hijo de David.
Y llegado á la casa, vinieron á él los ciegos; y Jesús les dice: ¿Creéis que puedo hacer esto? Ellos dicen: Sí, Señor.
Entonces tocó los ojos de ellos, diciendo: Conforme á vuestra fe os sea hecho.
Y los ojos de ellos fueron abiertos. Y Jesús les encargó rigurosamente, diciendo: Mirad que nadie lo sepa.
Mas ellos salidos, divulgaron su fama por toda aquella tierra.
Y saliendo ellos, he aquí, le trajeron un hombre mudo, endemoniado.
Y echado fuera el demonio, el mudo habló; y las gentes se maravillaron, diciendo: Nunca ha sido vista cosa semejante en Israel.
Mas los Fariseos decían: Por el príncipe de los demonios echa fuera los demonios.
Y rodeaba Jesús por todas las ciudades y aldeas, enseñando en las sinagogas de ellos, y predicando el evangelio del reino, y sanando toda enfermedad y todo achaque en el pueblo.
Y viendo las gentes, tuvo compasión de ellas; porque estaban derramadas y esparcidas como ovejas que no tienen pastor.
Entonces dice á sus discípulos: A la verdad la mies es mucha, mas los obreros pocos.
Rogad, pues, al Señor de la mies, que envíe obreros á su mies.
Y fué, que acabando Jesús de dar mandamientos á sus doce discípulos, se fué de allí á enseñar y á predicar en las ciudades de ellos.
Y oyendo Juan en la prisión los hechos de Cristo, le envió dos de sus discípulos,
Diciendo: ¿Eres tú aquél que había de venir, ó esperaremos á otro?
Y respondiendo Jesús, les dijo: Id, y haced saber á Juan las cosas que oís y veis:
Los ciegos ven, y los cojos andan; los leprosos son limpiados, y los sordos oyen; los muertos son resucitados, y á los pobres es anunciado el evangelio.
Y bienaventurado es el que no fuere escandalizado en mí.
E idos ellos, comenzó Jesús á decir de Juan á las gentes: ¿Qué salisteis á ver al desierto? ¿una caña que es meneada del viento?
Mas ¿qué salisteis á ver? ¿un hombre cubierto de delicados vestidos? He aquí, los que traen vestidos delicados, en las casas de los reyes están.
Mas ¿qué salisteis á ver? ¿un profeta? También os digo, y más que profeta.
Porque éste es de quien está escrito: He aquí, yo envío mi mensajero delante de tu faz, que aparejará tu camino delante de ti.
De cierto os digo, que no se levantó entre los que nacen de mujeres otro mayor que Juan el Bautista; mas el que es muy más pequeño en el reino de los cielos, mayor es que él.
Desde los días de Juan el Bautista hasta ahora, al reino de los cielos se hace fuerza, y los valientes lo arrebatan.
Porque todos los profetas y la ley hasta Juan profetizaron.
Y si queréis recibir, él es aquel Elías que había de venir.
El que tiene oídos para oir, oiga.
Mas ¿á quién compararé esta generación? Es semejante á los muchachos que se sientan en las plazas, y dan voces á sus compañeros,
Y dicen: Os tañimos flauta, y no bailasteis; os endechamos, y no lamentasteis.
Porque vino Juan, que ni comía ni bebía, y dicen: Demonio tiene.
Vino el Hijo del hombre, que come y bebe, y dicen: He aquí un hombre comilón, y bebedor de vino, amigo de publicanos y de pecadores. Mas la sabiduría es justificada por sus hijos.
Entonces comenzó á reconvenir á las ciudades en las cuales habían sido hechas muy muchas de sus maravillas, porque no se habían arrepentido, diciendo:
¡Ay de ti, Corazín! ¡Ay de ti, Bethsaida! porque si en Tiro y en Sidón fueran hechas las maravillas que han sido hechas en vosotras, en otro tiempo se hubieran arrepentido en saco y en ceniza.
Por tanto os digo, que á Tiro y á Sidón será más tolerable el castigo en el día del juicio, que á vosotras.
Y tú, Capernaum, que eres levantada hasta el cielo, hasta los infiernos serás abajada; porque si en los de Sodoma fueran hechas las maravillas que han sido hechas en ti, hubieran quedado hasta el día de hoy.
Por tanto os digo, que á la tierra de los de Sodoma será más tolerable el castigo en el día del juicio, que á ti.
En aquel tiempo, respondiendo Jesús, dijo: Te alabo, Padre, Señor del cielo y de la tierra, que hayas escondido estas cosas de los sabios y de los entendidos, y las hayas revelado á los niños.
Así, Padre, pues que así agradó en tus ojos.
Todas las cosas me son entregadas de mi Padre: y nadie conoció al Hijo, sino el Padre; ni al Padre conoció alguno, sino el Hijo, y aquel á quien el Hijo lo quisiere revelar.
Venid á mí todos los que estáis trabajados y cargados, que yo os haré descansar.
Llevad mi yugo sobre vosotros, y aprended de mí, que soy manso y humilde de corazón; y hallaréis descanso para vuestras almas.
Porque mi yugo es fácil, y ligera mi carga.
En aquel tiempo iba Jesús por los sembrados en sábado; y sus discípulos tenían hambre, y comenzaron á coger espigas, y á comer.
Y viéndolo los Fariseos, le dijeron: He aquí tus discípulos hacen lo que no es lícito hacer en sábado.
Y él les dijo: ¿No habéis leído qué hizo David, teniendo él hambre y los que con él estaban:
Cómo entró en la casa de Dios, y comió los panes de la proposición, que no le era lícito comer, ni á los que estaban con él, sino á solos los sacerdotes?
O ¿no habéis leído en la ley, que los sábados en el templo los sacerdotes profanan el sábado, y son sin culpa?
Pues os digo que uno mayor que el templo está aquí.
Mas si supieseis qué es: Misericordia quiero y no sacrificio, no condenaríais á los inocentes:
Porque Señor es del sábado el Hijo del hombre.
Y partiéndose de allí, vino á la sinagoga de ellos.
Y he aquí había allí uno que tenía una mano seca: y le preguntaron, diciendo: ¿Es lícito curar en sábado? por acusarle.
Y él les dijo: ¿Qué hombre habrá de vosotros, que tenga una oveja, y si cayere ésta en una fosa en sábado, no le eche mano, y la levante?
Pues ¿cuánto más vale un hombre que una oveja? Así que, lícito es en los sábados hacer bien.
Entonces dijo á aquel hombre: Extiende tu mano. Y él la extendió, y fué restituída sana como la otra.
Y salidos los Fariseos, consultaron contra él para destruirle.
Mas sabiéndo lo Jesús, se apartó de allí: y le siguieron muchas gentes, y sanaba á todos.
Y él les encargaba eficazmente que no le descubriesen:
Para que se cumpliese lo que estaba dicho por el profeta Isaías, que dijo:
He aquí mi siervo, al cual he escogido; mi Amado, en el cual se agrada mi alma: pondré mi Espíritu sobre él, y á los Gentiles anunciará juicio.
No contenderá, ni voceará: ni nadie oirá en las calles su voz.
La caña cascada no quebrará, y el pábilo que humea no apagará, hasta que saque á victoria el juicio.
Y en su nombre esperarán los Gentiles.
Entonces fué traído á él un endemoniado, ciego y mudo, y le sanó; de tal manera, que el ciego y mudo hablaba y veía.
Y todas las gentes estaban atónitas, y decían: ¿Será éste aquel Hijo de David?
Mas los Fariseos, oyéndolo, decían: Este no echa fuera los demonios, sino por Beelzebub, príncipe de los demonios.
Y Jesús, como sabía los pensamientos de ellos, les dijo: Todo reino dividido contra sí mismo, es desolado; y toda ciudad ó casa dividida contra sí misma, no permanecerá.
Y si Satanás echa fuera á Satanás, contra sí mismo está dividido; ¿cómo, pues, permanecerá su reino?
Y si yo por Beelzebub echo fuera los demonios, ¿vuestros hijos por quién los echan? Por tanto, ellos serán vuestros jueces.
Y si por espíritu de Dios yo echo fuera los demonios, ciertamente ha llegado á vosotros el reino de Dios.
Porque, ¿cómo puede alguno entrar en la casa del valiente, y saquear sus alhajas, si primero no prendiere al valiente? y entonces saqueará su casa.
El que no es conmigo, contra mí es; y el que conmigo no recoge, derrama.
Por tanto os digo: Todo pecado y blasfemia será perdonado á los hombres: mas la blasfemia contra el Espíritu no será perdonada á los hombres.
Y cualquiera que hablare contra el Hijo del hombre, le será perdonado: mas cualquiera que hablare contra el Espíritu Santo, no le será perdonado, ni en este siglo, ni en el venidero.
O haced el árbol bueno, y su fruto bueno, ó haced el árbol corrompido, y su fruto dañado; porque por el fruto es conocido el árbol.
Generación de víboras, ¿cómo podéis hablar bien, siendo malos? porque de la abundancia del corazón habla la boca.
El hombre bueno del buen tesoro del corazón saca buenas cosas: y el hombre malo del mal tesoro saca malas cosas.
Mas yo os digo, que toda palabra ociosa que hablaren los hombres, de ella darán cuenta en el día del juicio.
Porque por tus palabras serás justificado, y por tus palabras serás condenado.
Entonces respondieron algunos de los escribas y de los Fariseos, diciendo: Maestro, deseamos ver de ti señal.
Y él respondió, y les dijo: La generación mala y adulterina demanda señal; mas señal no le será dada, sino la señal de Jonás profeta.
Porque como estuvo Jonás en el vientre de la ballena tres días y tres noches, así estará el Hijo del hombre en el corazón de la tierra tres días y tres noches.
Los hombres de Nínive se levantarán en el juicio con esta generación, y la condenarán; porque ellos se arrepintieron á la predicación de Jonás; y he aquí más que Jonás en este lugar.
La reina del Austro se levantará en el juicio con esta generación, y la condenará; porque vino de los fines de la tierra para oir la sabiduría de Salomón: y he aquí más que Salomón en este lugar.
Cuando el espíritu inmundo ha salido del hombre, anda por lugares secos, buscando reposo, y no lo halla.
Entonces dice: Me volveré á mi casa de donde salí: y cuando viene, la halla desocupada, barrida y adornada.
Entonces va, y toma consigo otros siete espíritus peores que él, y entrados, moran allí; y son peores las cosas últimas del tal hombre que las primeras: así también acontecerá á esta generación mala.
Y estando él aún hablando á las gentes, he aquí su madre y sus hermanos estaban fuera, que le querían hablar.
Y le dijo uno: He aquí tu madre y tus hermanos están fuera, que te quieren hablar.
Y respondiendo él al que le decía esto, dijo: ¿Quién es mi madre y quiénes son mis hermanos?
Y extendiendo su mano hacia sus discípulos, dijo: He aquí mi madre y mis hermanos.
Porque todo aquel que hiciere la voluntad de mi Padre que está en los cielos, ese es mi hermano, y hermana, y madre.
Y aquel día, saliendo Jesús de casa, se sentó junto á la mar.
Y se allegaron á él muchas gentes; y entrándose él en el barco, se sentó, y toda la gente estaba á la ribera.
Y les habló muchas cosas por parábolas, diciendo: He aquí el que sembraba salió á sembrar.
Y sembrando, parte de la simiente cayó junto al camino; y vinieron las aves, y la comieron.
Y parte cayó en pedregales, donde no tenía mucha tierra; y nació luego, porque no tenía profundidad de tierra:
Mas en saliendo el sol, se quemó; y secóse, porque no tenía raíz.
Y parte cayó en espinas; y las espinas crecieron, y la ahogaron.
Y parte cayó en buena tierra, y dió fruto, cuál á ciento, cuál á sesenta, y cuál á treinta.
Quien tiene oídos para oir, oiga.
Entonces, llegándose los discípulos, le dijeron: ¿Por qué les hablas por parábolas?
Y él respondiendo, les dijo: Por que á vosotros es concedido saber los misterios del reino de los cielos; mas á ellos no es concedido.
Porque á cualquiera que tiene, se le dará, y tendrá más; pero al que no tiene, aun lo que tiene le será quitado.
Por eso les hablo por parábolas; porque viendo no ven, y oyendo no oyen, ni entienden.
De manera que se cumple en ellos la profecía de Isaías, que dice: De oído oiréis, y no entenderéis; y viendo veréis, y no miraréis.
Porque el corazón de este pueblo está engrosado, y de los oídos oyen pesadamente, y de sus ojos guiñan: para que no vean de los ojos, y oigan de los oídos, y del corazón entiendan, y se conviertan, y yo los sane.
Mas bienaventurados vuestros ojos, porque ven; y vuestros oídos, porque oyen.
Porque de cierto os digo, que muchos profetas y justos desearon ver lo que veis, y no lo vieron: y oir lo que oís, y no lo oyeron.
Oid, pues, vosotros la parábola del que siembra:
Oyendo cualquiera la palabra del reino, y no entendiéndola, viene el malo, y arrebata lo que fué sembrado en su corazón: éste es el que fué sembrado junto al camino.
Y el que fué sembrado en pedregales, éste es el que oye la palabra, y luego la recibe con gozo.
Mas no tiene raíz en sí, antes es temporal: que venida la aflicción ó la persecución por la palabra, luego se ofende.
Y el que fué sembrado en espinas, éste es el que oye la palabra; pero el afán de este siglo y el engaño de las riquezas, ahogan la palabra, y hácese infructuosa.
Mas el que fué sembrado en buena tierra, éste es el que oye y entiende la palabra, y el que lleva fruto: y lleva uno á ciento, y otro á sesenta, y otro á treinta.
Otra parábola les propuso, diciendo: El reino de los cielos es semejante al hombre que siembra buena simiente en su campo:
Mas durmiendo los hombres, vino su enemigo, y sembró cizaña entre el trigo, y se fué.
Y como la hierba salió é hizo fruto, entonces apareció también la cizaña.
Y llegándose los siervos del padre de la familia, le dijeron: Señor, ¿no sembraste buena simiente en tu campo? ¿de dónde, pues, tiene cizaña?
Y él les dijo: Un hombre enemigo ha hecho esto. Y los siervos le dijeron: ¿Quieres, pues, que vayamos y la cojamos?
Y él dijo: No; porque cogiendo la cizaña, no arranquéis también con ella el trigo.
Dejad crecer juntamente lo uno y lo otro hasta la siega; y al tiempo de la siega yo diré á los segadores: Coged primero la cizaña, y atadla en manojos para quemarla; mas recoged el trigo en mi alfolí.
Otra parábola les propuso, diciendo: El reino de los cielos es semejante al grano de mostaza, que tomándolo alguno lo sembró en su campo:
El cual á la verdad es la más pequeña de todas las simientes; mas cuando ha crecido, es la mayor de las hortalizas, y se hace árbol, que vienen las aves del cielo y hacen nidos en sus ramas.
Otra parábola les dijo: El reino de los cielos es semejante á la levadura que tomó una mujer, y escondió en tres medidas de harina, hasta que todo quedó leudo.
Todo esto habló Jesús por parábolas á las gentes, y sin parábolas no les hablaba:
Para que se cumpliese lo que fué dicho por el profeta, que dijo: Abriré en parábolas mi boca; rebosaré cosas escondidas desde la fundación del mundo.
Entonces, despedidas las gentes, Jesús se vino á casa; y llegándose á él sus discípulos, le dijeron: Decláranos la parábola de la cizaña del campo.
Y respondiendo él, les dijo: El que siembra la buena simiente es el Hijo del hombre;
Y el campo es el mundo; y la buena simiente son los hijos del reino, y la cizaña son los hijos del malo;
Y el enemigo que la sembró, es el diablo; y la siega es el fin del mundo, y los segadores son los ángeles.
De manera que como es cogida la cizaña, y quemada al fuego, así será en el fin de este siglo.
Enviará el Hijo del hombre sus ángeles, y cogerán de su reino todos los escándalos, y los que hacen iniquidad,
Y los echarán en el horno de fuego: allí será el lloro y el crujir de dientes.
Entonces los justos resplandecerán como el sol en el reino de su Padre: el que tiene oídos para oir, oiga.
Además, el reino de los cielos es semejante al tesoro escondido en el campo; el cual hallado, el hombre lo encubre, y de gozo de ello va, y vende todo lo que tiene, y compra aquel campo.
También el reino de los cielos es semejante al hombre tratante, que busca buenas perlas;
Que hallando una preciosa perla, fué y vendió todo lo que tenía, y la compró.
Asimismo el reino de los cielos es semejante á la red, que echada en la mar, coge de todas suertes de peces:
La cual estando llena, la sacaron á la orilla; y sentados, cogieron lo bueno en vasos, y lo malo echaron fuera.
Así será al fin del siglo: saldrán los ángeles, y apartarán á los malos de entre los justos,
Y los echarán en el horno del fuego: allí será el lloro y el crujir de dientes.
Díceles Jesús: ¿Habéis entendido todas estas cosas? Ellos responden: Sí, Señor.
Y él les dijo: Por eso todo escriba docto en el reino de los cielos, es semejante á un padre de familia, que saca de su tesoro cosas nuevas y cosas viejas.
Y aconteció que acabando Jesús estas parábolas, pasó de allí.
Y venido á su tierra, les enseñaba en la sinagoga de ellos, de tal manera que ellos estaban atónitos, y decían: ¿De dónde tiene éste esta sabiduría, y estas maravillas?
¿No es éste el hijo del carpintero? ¿no se llama su madre María, y sus hermanos Jacobo y José, y Simón, y Judas?
¿Y no están todas sus hermanas con nosotros? ¿De dónde, pues, tiene éste todas estas cosas?
Y se escandalizaban en él. Mas Jesús les dijo: No hay profeta sin honra sino en su tierra y en su casa.
Y no hizo allí muchas maravillas, á causa de la incredulidad de ellos.
En aquel tiempo Herodes el tetrarca oyó la fama de Jesús,
Y dijo á sus criados: Este es Juan el Bautista: él ha resucitado de los muertos, y por eso virtudes obran en él.
Porque Herodes había prendido á Juan, y le había aprisionado y puesto en la cárcel, por causa de Herodías, mujer de Felipe su hermano;
Porque Juan le decía: No te es lícito tenerla.
Y quería matarle, mas temía al pueblo; porque le tenían como á profeta.
Mas celebrándose el día del nacimiento de Herodes, la hija de Herodías danzó en medio, y agradó á Herodes.
Y prometió él con juramento de darle todo lo que pidiese.
Y ella, instruída primero de su madre, dijo: Dame aquí en un plato la cabeza de Juan el Bautista.
Entonces el rey se entristeció; mas por el juramento, y por los que estaban juntamente á la mesa, mandó que se le diese.
Y enviando, degolló á Juan en la cárcel.
Y fué traída su cabeza en un plato, y dada á la muchacha; y ella la presentó á su madre.
Entonces llegaron sus discípulos, y tomaron el cuerpo, y lo enterraron; y fueron, y dieron las nuevas á Jesús.
Y oyéndo lo Jesús, se apartó de allí en un barco á un lugar descierto, apartado: y cuando las gentes lo oyeron, le siguieron á pie de las ciudades.
Y saliendo Jesús, vió un gran gentío, y tuvo compasión de ellos, y sanó á los que de ellos había enfermos.
Y cuando fué la tarde del día, se llegaron á él sus discípulos, diciendo: El lugar es desierto, y el tiempo es ya pasado: despide las gentes, para que se vayan por las aldeas, y compren para sí de comer.
Y Jesús les dijo: No tienen necesidad de irse: dadles vosotros de comer.
Y ellos dijeron: No tenemos aquí sino cinco panes y dos peces.
Y él les dijo: Traédmelos acá.
Y mandando á las gentes recostarse sobre la hierba, tomando los cinco panes y los dos peces, alzando los ojos al cielo, bendijo, y partió y dió los panes á los discípulos, y los discípulos á las gentes.
Y comieron todos, y se hartaron; y alzaron lo que sobró de los pedazos, doce cestas llenas.
Y los que comieron fueron como cinco mil hombres, sin las mujeres y los niños.
Y luego Jesús hizo á sus discípulos entrar en el barco, é ir delante de él á la otra parte del lago, entre tanto que él despedía á las gentes.
Y despedidas las gentes, subió al monte, apartado, á orar: y como fué la tarde del día, estaba allí solo.
Y ya el barco estaba en medio de la mar, atormentado de las ondas; porque el viento era contrario.
Mas á la cuarta vela de la noche, Jesús fué á ellos andando sobre la mar.
Y los discípulos, viéndole andar sobre la mar, se turbaron, diciendo: Fantasma es. Y dieron voces de miedo.
Mas luego Jesús les habló, diciendo: Confiad, yo soy; no tengáis miedo.
Entonces le respondió Pedro, y dijo: Señor, si tú eres, manda que yo vaya á ti sobre las aguas.
Y él dijo: Ven. Y descendiendo Pedro del barco, andaba sobre las aguas para ir á Jesús.
Mas viendo el viento fuerte, tuvo miedo; y comenzándose á hundir, dió voces, diciendo: Señor, sálvame.
Y luego Jesús, extendiendo la mano, trabó de él, y le dice: Oh hombre de poca fe, ¿por qué dudaste?
Y como ellos entraron en el barco, sosegóse el viento.
Entonces los que estaban en el barco, vinieron y le adoraron, diciendo: Verdaderamente eres Hijo de Dios.
Y llegando á la otra parte, vinieron á la tierra de Genezaret.
Y como le conocieron los hombres de aquel lugar, enviaron por toda aquella tierra alrededor, y trajeron á él todos los enfermos;
Y le rogaban que solamente tocasen el borde de su manto; y todos los que tocaron, quedaron sanos.
Y llegándose los Fariseos y los Saduceos para tentarle, le pedían que les mostrase señal del cielo.
Mas él respondiendo, les dijo: Cuando es la tarde del día, decís: Sereno; porque el cielo tiene arreboles.
Y á la mañana: Hoy tempestad; porque tiene arreboles el cielo triste. Hipócritas, que sabéis hacer diferencia en la faz del cielo; ¿y en las señales de los tiempos no podéis?
La generación mala y adulterina demanda señal; mas señal no le será dada, sino la señal de Jonás profeta. Y dejándolos, se fué.
Y viniendo sus discípulos de la otra parte del lago, se habían olvidado de tomar pan.
Y Jesús les dijo: Mirad, y guardaos de la levadura de los Fariseos y de los Saduceos.
Y ellos pensaban dentro de sí, diciendo: Esto dice porque no tomamos pan.
Y entendiéndolo Jesús, les dijo: ¿Por qué pensáis dentro de vosotros, hombres de poca fe, que no tomasteis pan?
¿No entendéis aún, ni os acordáis de los cinco panes entre cinco mil hombres, y cuántos cestos alzasteis?
¿Ni de los siete panes entre cuatro mil, y cuántas espuertas tomasteis?
¿Cómo es que no entendéis que no por el pan os dije, que os guardaseis de la levadura de los Fariseos y de los Saduceos?
Entonces entendieron que no les había dicho que se guardasen de la levadura de pan, sino de la doctrina de los Fariseos y de los Saduceos.
Y viniendo Jesús á las partes de Cesarea de Filipo, preguntó á sus discípulos, diciendo: ¿Quién dicen los hombres que es el Hijo del hombre?
Y ellos dijeron: Unos, Juan el Bautista; y otros, Elías; y otros, Jeremías, ó alguno de los profetas.
El les dice: Y vosotros, ¿quién decís que soy?
Y respondiendo Simón Pedro, dijo: Tú eres el Cristo, el Hijo del Dios viviente.
Entonces, respondiendo Jesús, le dijo: Bienaventurado eres, Simón, hijo de Jonás; porque no te lo reveló carne ni sangre, mas mi Padre que está en los cielos.
Mas yo también te digo, que tú eres Pedro, y sobre esta piedra edificaré mi iglesia; y las puertas del infierno no prevalecerán contra ella.
Y á ti daré las llaves del reino de los cielos; y todo lo que ligares en la tierra será ligado en los cielos; y todo lo que desatares en la tierra será desatado en los cielos.
Entonces mandó á sus discípulos que á nadie dijesen que él era Jesús el Cristo.
Desde aquel tiempo comenzó Jesús á declarar á sus discípulos que le convenía ir á Jerusalem, y padecer mucho de los ancianos, y de los príncipes de los sacerdotes, y de los escribas; y ser muerto, y resucitar al tercer día.
Y Pedro, tomándolo aparte, comenzó á reprenderle, diciendo: Señor, ten compasión de ti: en ninguna manera esto te acontezca.
Entonces él, volviéndose, dijo á Pedro: Quítate de delante de mí, Satanás; me eres escándalo; porque no entiendes lo que es de Dios sino lo que es de los hombres.
Entonces Jesús dijo á sus discípulos: Si alguno quiere venir en pos de mí, niéguese á sí mismo, y tome su cruz, y sígame.
Porque cualquiera que quisiere salvar su vida, la perderá, y cualquiera que perdiere su vida por causa de mí, la hallará.
Porque ¿de qué aprovecha al hombre, si granjeare todo el mundo, y perdiere su alma? O ¿qué recompensa dará el hombre por su alma?
Porque el Hijo del hombre vendrá en la gloria de su Padre con sus ángeles, y entonces pagará á cada uno conforme á sus obras.
De cierto os digo: hay algunos de los que están aquí, que no gustarán la muerte, hasta que hayan visto al Hijo del hombre viniendo en su reino.
Y después de seis días, Jesús toma á Pedro, y á Jacobo, y á Juan su hermano, y los lleva aparte á un monte alto:
Y se transfiguró delante de ellos; y resplandeció su rostro como el sol, y sus vestidos fueron blancos como la luz.
Y he aquí les aparecieron Moisés y Elías, hablando con él.
Y respondiendo Pedro, dijo á Jesús: Señor, bien es que nos quedemos aquí: si quieres, hagamos aquí tres pabellones: para ti uno, y para Moisés otro, y otro para Elías.
Y estando aún él hablando, he aquí una nube de luz que los cubrió; y he aquí una voz de la nube, que dijo: Este es mi Hijo amado, en el cual tomo contentamiento: á él oid.
Y oyendo esto los discípulos, cayeron sobre sus rostros, y temieron en gran manera.
Entonces Jesús llegando, los tocó, y dijo: Levantaos, y no temáis.
Y alzando ellos sus ojos, á nadie vieron, sino á solo Jesús.
Y como descendieron del monte, les mandó Jesús, diciendo: No digáis á nadie la visión, hasta que el Hijo del hombre resucite de los muertos.
Entonces sus discípulos le preguntaron, diciendo: ¿Por qué dicen pues los escribas que es menester que Elías venga primero?
Y respondiendo Jesús, les dijo: A la verdad, Elías vendrá primero, y restituirá todas las cosas.
Mas os digo, que ya vino Elías, y no le conocieron; antes hicieron en él todo lo que quisieron: así también el Hijo del hombre padecerá de ellos.
Los discípulos entonces entendieron, que les habló de Juan el Bautista.
Y como ellos llegaron al gentío, vino á él un hombre hincándosele de rodillas,
Y diciendo: Señor, ten misericordia de mi hijo, que es lunático, y padece malamente; porque muchas veces cae en el fuego, y muchas en el agua.
Y le he presentado á tus discípulos, y no le han podido sanar.
Y respondiendo Jesús, dijo: ¡Oh generación infiel y torcida! ¿hasta cuándo tengo de estar con vosotros? ¿hasta cuándo os tengo de sufrir? traédmele acá.
Y Jesús le reprendió, y salió el demonio de él; y el mozo fué sano desde aquella hora.
Entonces, llegándose los discípulos á Jesús, aparte, dijeron: ¿Por qué nosotros no lo pudimos echar fuera?
Y Jesús les dijo: Por vuestra incredulidad; porque de cierto os digo, que si tuviereis fe como un grano de mostaza, diréis á este monte: Pásate de aquí allá: y se pasará: y nada os será imposible.
Mas este linaje no sale sino por oración y ayuno.
Y estando ellos en Galilea, Jesús les dijo: El Hijo del hombre será entregado en manos de hombres,
Y le matarán; mas al tercer día resucitará. Y ellos se entristecieron en gran manera.
Y como llegaron á Capernaum, vinieron á Pedro los que cobraban las dos dracmas, y dijeron: ¿Vuestro Maestro no paga las dos dracmas?
El dice: Sí. Y entrando él en casa, Jesús le habló antes, diciendo: ¿Qué te parece, Simón? Los reyes de la tierra, ¿de quién cobran los tributos ó el censo? ¿de sus hijos ó de los extraños?
Pedro le dice: De los extraños. Jesús le dijo: Luego los hijos son francos.
Mas porque no los escandalicemos, ve á la mar, y echa el anzuelo, y el primer pez que viniere, tómalo, y abierta su boca, hallarás un estatero: tómalo, y dáselo por mí y por ti.
En aquel tiempo se llegaron los discípulos á Jesús, diciendo: ¿Quién es el mayor en el reino de los cielos?
Y llamando Jesús á un niño, le puso en medio de ellos,
Y dijo: De cierto os digo, que si no os volviereis, y fuereis como niños, no entraréis en el reino de los cielos.
Así que, cualquiera que se humillare como este niño, éste es el mayor en el reino de los cielos.
Y cualquiera que recibiere á un tal niño en mi nombre, á mí recibe.
Y cualquiera que escandalizare á alguno de estos pequeños que creen en mí, mejor le fuera que se le colgase al cuello una piedra de molino de asno, y que se le anegase en el profundo de la mar.
¡Ay del mundo por los escándalos! porque necesario es que vengan escándalos; mas ¡ay de aquel hombre por el cual viene el escándalo!
Por tanto, si tu mano ó tu pie te fuere ocasión de caer, córtalo y échalo de ti: mejor te es entrar cojo ó manco en la vida, que teniendo dos manos ó dos pies ser echado en el fuego eterno.
Y si tu ojo te fuere ocasión de caer, sácalo y échalo de ti: mejor te es entrar con un solo ojo en la vida, que teniendo dos ojos ser echado en el infierno del fuego.
Mirad no tengáis en poco á alguno de estos pequeños; porque os digo que sus ángeles en los cielos ven siempre la faz de mi Padre que está en los cielos.
Porque el Hijo del hombre ha venido para salvar lo que se había perdido.
¿Qué os parece? Si tuviese algún hombre cien ovejas, y se descarriase una de ellas, ¿no iría por los montes, dejadas las noventa y nueve, á buscar la que se había descarriado?
Y si aconteciese hallarla, de cierto os digo, que más se goza de aquélla, que de las noventa y nueve que no se descarriaron.
Así, no es la voluntad de vuestro Padre que está en los cielos, que se pierda uno de estos pequeños.
Por tanto, si tu hermano pecare contra ti, ve, y redargúyele entre ti y él solo: si te oyere, has ganado á tu hermano.
Mas si no te oyere, toma aún contigo uno ó dos, para que en boca de dos ó de tres testigos conste toda palabra.
Y si no oyere á ellos, dilo á la iglesia: y si no oyere á la iglesia, tenle por étnico y publicano.
De cierto os digo que todo lo que ligareis en la tierra, será ligado en el cielo; y todo lo que desatareis en la tierra, será desatado en el cielo.
Otra vez os digo, que si dos de vosotros se convinieren en la tierra, de toda cosa que pidieren, les será hecho por mi Padre que está en los cielos.
Porque donde están dos ó tres congregados en mi nombre, allí estoy en medio de ellos.
Entonces Pedro, llegándose á él, dijo: Señor, ¿cuántas veces perdonaré á mi hermano que pecare contra mí? ¿hasta siete?
Jesús le dice: No te digo hasta siete, mas aun hasta setenta veces siete.
Por lo cual, el reino de los cielos es semejante á un hombre rey, que quiso hacer cuentas con sus siervos.
Y comenzando á hacer cuentas, le fué presentado uno que le debía diez mil talentos.
Mas á éste, no pudiendo pagar, mandó su señor venderle, y á su mujer é hijos, con todo lo que tenía, y que se le pagase.
Entonces aquel siervo, postrado, le adoraba, diciendo: Señor, ten paciencia conmigo, y yo te lo pagaré todo.
El señor, movido á misericordia de aquel siervo, le soltó y le perdonó la deuda.
Y saliendo aquel siervo, halló á uno de sus consiervos, que le debía cien denarios; y trabando de él, le ahogaba, diciendo: Págame lo que debes.
Entonces su consiervo, postrándose á sus pies, le rogaba, diciendo: Ten paciencia conmigo, y yo te lo pagaré todo.
Mas él no quiso; sino fué, y le echó en la cárcel hasta que pagase la deuda.
Y viendo sus consiervos lo que pasaba, se entristecieron mucho, y viniendo, declararon á su señor todo lo que había pasado.
Entonces llamándole su señor, le dice: Siervo malvado, toda aquella deuda te perdoné, porque me rogaste:
¿No te convenía también á ti tener misericordia de tu consiervo, como también yo tuve misericordia de ti?
Entonces su señor, enojado, le entregó á los verdugos, hasta que pagase todo lo que le debía.
Así también hará con vosotros mi Padre celestial, si no perdonareis de vuestros corazones cada uno á su hermano sus ofensas.
Y aconteció que acabando Jesús estas palabras, se pasó de Galilea, y vino á los términos de Judea, pasado el Jordán.
Y le siguieron muchas gentes, y los sanó allí.
Entonces se llegaron á él los Fariseos, tentándole, y diciéndole: ¿Es lícito al hombre repudiar á su mujer por cualquiera causa?
Y él respondiendo, les dijo: ¿No habéis leído que el que los hizo al principio, macho y hembra los hizo,
Y dijo: Por tanto, el hombre dejará padre y madre, y se unirá á su mujer, y serán dos en una carne?
Así que, no son ya más dos, sino una carne: por tanto, lo que Dios juntó, no lo aparte el hombre.
Dícenle: ¿Por qué, pues, Moisés mandó dar carta de divorcio, y repudiarla?
Díceles: Por la dureza de vuestro corazón Moisés os permitió repudiar á vuestras mujeres: mas al principio no fué así.
Y yo os digo que cualquiera que repudiare á su mujer, si no fuere por causa de fornicación, y se casare con otra, adultera: y el que se casare con la repudiada, adultera.
Dícenle sus discípulos: Si así es la condición del hombre con su mujer, no conviene casarse.
Entonces él les dijo: No todos reciben esta palabra, sino aquellos á quienes es dado.
Porque hay eunucos que nacieron así del vientre de su madre; y hay eunucos, que son hechos eunucos por los hombres; y hay eunucos que se hicieron á sí mismos eunucos por causa del reino de los cielos; el que pueda ser capaz de eso, séalo.
Entonces le fueron presentados unos niños, para que pusiese las manos sobre ellos, y orase; y los discípulos les riñeron.
Y Jesús dijo: Dejad á los niños, y no les impidáis de venir á mí; porque de los tales es el reino de los cielos.
Y habiendo puesto sobre ellos las manos, se partió de allí.
Y he aquí, uno llegándose le dijo: Maestro bueno, ¿qué bien haré para tener la vida eterna?
Y él le dijo: ¿Por qué me llamas bueno? Ninguno es bueno sino uno, es á saber, Dios: y si quieres entrar en la vida, guarda los mandamientos.
Dícele: ¿Cuáles? Y Jesús dijo: No matarás: No adulterarás: No hurtarás: No dirás falso testimonio:
Honra á tu padre y á tu madre: y, Amarás á tu prójimo como á ti mismo.
Dícele el mancebo: Todo esto guardé desde mi juventud: ¿qué más me falta?
Dícele Jesús: Si quieres ser perfecto, anda, vende lo que tienes, y da lo á los pobres, y tendrás tesoro en el cielo; y ven, sígueme.
Y oyendo el mancebo esta palabra, se fué triste, porque tenía muchas posesiones.
Entonces Jesús dijo á sus discípulos: De cierto os digo, que un rico difícilmente entrará en el reino de los cielos.
Mas os digo, que más liviano trabajo es pasar un camello por el ojo de una aguja, que entrar un rico en el reino de Dios.
Mas sus discípulos, oyendo estas cosas, se espantaron en gran manera, diciendo: ¿Quién pues podrá ser salvo?
Y mirándo los Jesús, les dijo: Para con los hombres imposible es esto; mas para con Dios todo es posible.
Entonces respondiendo Pedro, le dijo: He aquí, nosotros hemos dejado todo, y te hemos seguido: ¿qué pues tendremos?
Y Jesús les dijo: De cierto os digo, que vosotros que me habéis seguido, en la regeneración, cuando se sentará el Hijo del hombre en el trono de su gloria, vosotros también os sentaréis sobre doce tronos, para juzgar á las doce tribus de Israel.
Y cualquiera que dejare casas, ó hermanos, ó hermanas, ó padre, ó madre, ó mujer, ó hijos, ó tierras, por mi nombre, recibirá cien veces tanto, y heredará la vida eterna.
Mas muchos primeros serán postreros, y postreros primeros.
Y como se acercaron á Jerusalem, y vinieron á Bethfagé, al monte de las Olivas, entonces Jesús envió dos discípulos,
Diciéndoles: Id á la aldea que está delante de vosotros, y luego hallaréis una asna atada, y un pollino con ella: desatad la, y traédme los.
Y si alguno os dijere algo, decid: El Señor los ha menester. Y luego los dejará.
Y todo esto fué hecho, para que se cumpliese lo que fué dicho por el profeta, que dijo:
Decid á la hija de Sión: He aquí, tu Rey viene á ti, manso, y sentado sobre una asna, y sobre un pollino, hijo de animal de yugo.
Y los discípulos fueron, é hicieron como Jesús les mandó;
Y trajeron el asna y el pollino, y pusieron sobre ellos sus mantos; y se sentó sobre ellos.
Y la compañía, que era muy numerosa, tendía sus mantos en el camino: y otros cortaban ramos de los árboles, y los tendían por el camino.
Y las gentes que iban delante, y las que iban detrás, aclamaban diciendo: ¡Hosanna al Hijo de David! ¡Bendito el que viene en el nombre del Señor! ¡Hosanna en las alturas!
Y entrando él en Jerusalem, toda la ciudad se alborotó, diciendo: ¿Quién es éste?
Y las gentes decían: Este es Jesús, el profeta, de Nazaret de Galilea.
Y entró Jesús en el templo de Dios, y echó fuera todos los que vendían y compraban en el templo, y trastornó las mesas de los cambiadores, y las sillas de los que vendían palomas;
Y les dice: Escrito está: Mi casa, casa de oración será llamada; mas vosotros cueva de ladrones la habéis hecho.
Entonces vinieron á él ciegos y cojos en el templo, y los sanó.
Mas los príncipes de los sacerdotes y los escribas, viendo las maravillas que hacía, y á los muchachos aclamando en el templo y diciendo: ¡Hosanna al Hijo de David! se indignaron,
Y le dijeron: ¿Oyes lo que éstos dicen? Y Jesús les dice: Sí: ¿nunca leísteis: De la boca de los niños y de los que maman perfeccionaste la alabanza?
Y dejándolos, se salió fuera de la ciudad, á Bethania; y posó allí.
Y por la mañana volviendo á la ciudad, tuvo hambre.
Y viendo una higuera cerca del camino, vino á ella, y no halló nada en ella, sino hojas solamente; y le dijo: Nunca más para siempre nazca de ti fruto. Y luego se secó la higuera.
Y viendo esto los discípulos, maravillados decían: ¿Cómo se secó luego la higuera?
Y respondiendo Jesús les dijo: De cierto os digo, que si tuviereis fe, y no dudareis, no sólo haréis esto de la higuera: mas si á este monte dijereis: Quítate y échate en la mar, será hecho.
Y todo lo que pidiereis en oración, creyendo, lo recibiréis.
Y como vino al templo, llegáronse á él cuando estaba enseñando, los príncipes de los sacerdotes y los ancianos del pueblo, diciendo: ¿Con qué autoridad haces esto? ¿y quién te dió esta autoridad?
Y respondiendo Jesús, les dijo: Yo también os preguntaré una palabra, la cual si me dijereis, también yo os diré con qué autoridad hago esto.
El bautismo de Juan, ¿de dónde era? ¿del cielo, ó de los hombres? Ellos entonces pensaron entre sí, diciendo: Si dijéremos, del cielo, nos dirá: ¿Por qué pues no le creísteis?
Y si dijéremos, de los hombres, tememos al pueblo; porque todos tienen á Juan por profeta.
Y respondiendo á Jesús, dijeron: No sabemos. Y él también les dijo: Ni yo os digo con qué autoridad hago esto.
Mas, ¿qué os parece? Un hombre tenía dos hijos, y llegando al primero, le dijo: Hijo, ve hoy á trabajar en mi viña.
Y respondiendo él, dijo: No quiero; mas después, arrepentido, fué.
Y llegando al otro, le dijo de la misma manera; y respondiendo él, dijo: Yo, señor, voy. Y no fué.
¿Cuál de los dos hizo la voluntad de su padre? Dicen ellos: El primero. Díceles Jesús: De cierto os digo, que los publicanos y las rameras os van delante al reino de Dios.
Porque vino á vosotros Juan en camino de justicia, y no le creísteis; y los publicanos y las rameras le creyeron; y vosotros, viendo esto, no os arrepentisteis después para creerle.
Oid otra parábola: Fué un hombre, padre de familia, el cual plantó una viña; y la cercó de vallado, y cavó en ella un lagar, y edificó una torre, y la dió á renta á labradores, y se partió lejos.
Y cuando se acercó el tiempo de los frutos, envió sus siervos á los labradores, para que recibiesen sus frutos.
Mas los labradores, tomando á los siervos, al uno hirieron, y al otro mataron, y al otro apedrearon.
Envió de nuevo otros siervos, más que los primeros; é hicieron con ellos de la misma manera.
Y á la postre les envió su hijo, diciendo: Tendrán respeto á mi hijo.
Mas los labradores, viendo al hijo, dijeron entre sí: Este es el heredero; venid, matémosle, y tomemos su heredad.
Y tomado, le echaron fuera de la viña, y le mataron.
Pues cuando viniere el señor de la viña, ¿qué hará á aquellos labradores?
Dícenle: á los malos destruirá miserablemente, y su viña dará á renta á otros labradores, que le paguen el fruto á sus tiempos.
Díceles Jesús: ¿Nunca leísteis en las Escrituras: La piedra que desecharon los que edificaban, ésta fué hecha por cabeza de esquina: por el Señor es hecho esto, y es cosa maravillosa en nuestros ojos?
Por tanto os digo, que el reino de Dios será quitado de vosotros, y será dado á gente que haga los frutos de él.
Y el que cayere sobre esta piedra, será quebrantado; y sobre quien ella cayere, le desmenuzará.
Y oyendo los príncipes de los sacerdotes y los Fariseos sus parábolas, entendieron que hablaba de ellos.
Y buscando cómo echarle mano, temieron al pueblo; porque le tenían por profeta.
Y respondiendo Jesús, les volvió á hablar en parábolas, diciendo:
El reino de los cielos es semejante á un hombre rey, que hizo bodas á su hijo;
Y envió sus siervos para que llamasen los llamados á las bodas; mas no quisieron venir.
Volvió á enviar otros siervos, diciendo: Decid á los llamados: He aquí, mi comida he aparejado; mis toros y animales engordados son muertos, y todo está prevenido: venid á las bodas.
Mas ellos no se cuidaron, y se fueron, uno á su labranza, y otro á sus negocios;
Y otros, tomando á sus siervos, los afrentaron y los mataron.
Y el rey, oyendo esto, se enojó; y enviando sus ejércitos, destruyó á aquellos homicidas, y puso fuego á su ciudad.
Entonces dice á sus siervos: Las bodas á la verdad están aparejadas; mas los que eran llamados no eran dignos.
Id pues á las salidas de los caminos, y llamad á las bodas á cuantos hallareis.
Y saliendo los siervos por los caminos, juntaron á todos los que hallaron, juntamente malos y buenos: y las bodas fueron llenas de convidados.
Y entró el rey para ver los convidados, y vió allí un hombre no vestido de boda.
Y le dijo: Amigo, ¿cómo entraste aquí no teniendo vestido de boda? Mas él cerró la boca.
Entonces el rey dijo á los que servían: Atado de pies y de manos tomadle, y echadle en las tinieblas de afuera: allí será el lloro y el crujir de dientes.
Porque muchos son llamados, y pocos escogidos.
Entonces, idos los Fariseos, consultaron cómo le tomarían en alguna palabra.
Y envían á él los discípulos de ellos, con los Herodianos, diciendo: Maestro, sabemos que eres amador de la verdad, y que enseñas con verdad el camino de Dios, y que no te curas de nadie, porque no tienes acepción de persona de hombres.
Dinos pues, ¿qué te parece? ¿es lícito dar tributo á César, ó no?
Mas Jesús, entendida la malicia de ellos, les dice: ¿Por qué me tentáis, hipócritas?
Mostradme la moneda del tributo. Y ellos le presentaron un denario.
Entonces les dice: ¿Cúya es esta figura, y lo que está encima escrito?
Dícenle: De César. Y díceles: Pagad pues á César lo que es de César, y á Dios lo que es de Dios.
Y oyendo esto, se maravillaron; y dejándole se fueron.
Aquel día llegaron á él los Saduceos, que dicen no haber resurrección, y le preguntaron,
Diciendo: Maestro, Moisés dijo: Si alguno muriere sin hijos, su hermano se casará con su mujer, y despertará simiente á su hermano.
Fueron pues, entre nosotros siete hermanos: y el primero tomó mujer, y murió; y no teniendo generación, dejó su mujer á su hermano.
De la misma manera también el segundo, y el tercero, hasta los siete.
Y después de todos murió también la mujer.
En la resurrección pues, ¿de cuál de los siete será ella mujer? porque todos la tuvieron.
Entonces respondiendo Jesús, les dijo: Erráis ignorando las Escrituras, y el poder de Dios.
Porque en la resurrección, ni los hombres tomarán mujeres, ni las mujeres maridos; mas son como los ángeles de Dios en el cielo.
Y de la resurrección de los muertos, ¿no habéis leído lo que os es dicho por Dios, que dice:
Yo soy el Dios de Abraham, y el Dios de Isaac, y el Dios de Jacob? Dios no es Dios de muertos, sino de vivos.
Y oyendo esto las gentes, estaban atónitas de su doctrina.
Entonces los Fariseos, oyendo que había cerrado la boca á los Saduceos, se juntaron á una.
Y preguntó uno de ellos, intérprete de la ley, tentándole y diciendo:
Maestro, ¿cuál es el mandamiento grande en la ley?
Y Jesús le dijo: Amarás al Señor tu Dios de todo tu corazón, y de toda tu alma, y de toda tu mente.
Este es el primero y el grande mandamiento.
Y el segundo es semejante á éste: Amarás á tu prójimo como á ti mismo.
De estos dos mandamientos depende toda la ley y los profetas.
Y estando juntos los Fariseos, Jesús les preguntó,
Diciendo: ¿Qué os parece del Cristo? ¿de quién es Hijo? Dícenle: De David.
El les dice: ¿Pues cómo David en Espíritu le llama Señor, diciendo:
Dijo el Señor á mi Señor: Siéntate á mi diestra, entre tanto que pongo tus enemigos por estrado de tus pies?
Pues si David le llama Señor, ¿cómo es su Hijo?
Y nadie le podía responder palabra; ni osó alguno desde aquel día preguntarle más.
Entonces habló Jesús á las gentes y á sus discípulos,
Diciendo: Sobre la cátedra de Moisés se sentaron los escribas y los Fariseos:
Así que, todo lo que os dijeren que guardéis, guardad lo y haced lo; mas no hagáis conforme á sus obras: porque dicen, y no hacen.
Porque atan cargas pesadas y difíciles de llevar, y las ponen sobre los hombros de los hombres; mas ni aun con su dedo las quieren mover.
Antes, todas sus obras hacen para ser mirados de los hombres; porque ensanchan sus filacterias, y extienden los flecos de sus mantos;
Y aman los primeros asientos en las cenas, y las primeras sillas en las sinagogas;
Y las salutaciones en las plazas, y ser llamados de los hombres Rabbí, Rabbí.
Mas vosotros, no queráis ser llamados Rabbí; porque uno es vuestro Maestro, el Cristo; y todos vosotros sois hermanos.
Y vuestro padre no llaméis á nadie en la tierra; porque uno es vuestro Padre, el cual está en los cielos.
Ni seáis llamados maestros; porque uno es vuestro Maestro, el Cristo.
El que es el mayor de vosotros, sea vuestro siervo.
Porque el que se ensalzare, será humillado; y el que se humillare, será ensalzado.
Mas ¡ay de vosotros, escribas y Fariseos, hipócritas! porque cerráis el reino de los cielos delante de los hombres; que ni vosotros entráis, ni á los que están entrando dejáis entrar.
¡Ay de vosotros, escribas y Fariseos, hipócritas! porque coméis las casas de las viudas, y por pretexto hacéis larga oración: por esto llevaréis más grave juicio.
¡Ay de vosotros, escribas y Fariseos, hipócritas! porque rodeáis la mar y la tierra por hacer un prosélito; y cuando fuere hecho, le hacéis hijo del infierno doble más que vosotros.
¡Ay de vosotros, guías ciegos! que decís: Cualquiera que jurare por el templo es nada; mas cualquiera que jurare por el oro del templo, deudor es.
¡Insensatos y ciegos! porque ¿cuál es mayor, el oro, ó el templo que santifica al oro?
Y: Cualquiera que jurare por el altar, es nada; mas cualquiera que jurare por el presente que está sobre él, deudor es.
¡Necios y ciegos! porque, ¿cuál es mayor, el presente, ó el altar que santifica al presente?
Pues el que jurare por el altar, jura por él, y por todo lo que está sobre él;
Y el que jurare por el templo, jura por él, y por Aquél que habita en él;
Y el que jura por el cielo, jura por el trono de Dios, y por Aquél que está sentado sobre él.
¡Ay de vosotros, escribas y Fariseos, hipócritas! porque diezmáis la menta y el eneldo y el comino, y dejasteis lo que es lo más grave de la ley, es á saber, el juicio y la misericordia y la fe: esto era menester hacer, y no dejar lo otro.
¡Guías ciegos, que coláis el mosquito, mas tragáis el camello!
¡Ay de vosotros, escribas y Fariseos, hipócritas! porque limpiáis lo que está de fuera del vaso y del plato; mas de dentro están llenos de robo y de injusticia.
¡Fariseo ciego, limpia primero lo de dentro del vaso y del plato, para que también lo de fuera se haga limpio!
¡Ay de vosotros, escribas y Fariseos, hipócritas! porque sois semejantes á sepulcros blanqueados, que de fuera, á la verdad, se muestran hermosos, mas de dentro están llenos de huesos de muertos y de toda suciedad.
Así también vosotros de fuera, á la verdad, os mostráis justos á los hombres; mas de dentro, llenos estáis de hipocresía é iniquidad.
¡Ay de vosotros, escribas y Fariseos, hipócritas! porque edificáis los sepulcros de los profetas, y adornáis los monumentos de los justos,
Y decís: Si fuéramos en los días de nuestros padres, no hubiéramos sido sus compañeros en la sangre de los profetas.
Así que, testimonio dais á vosotros mismos, que sois hijos de aquellos que mataron á los profetas.
¡Vosotros también henchid la medida de vuestros padres!
¡Serpientes, generación de víboras! ¿cómo evitaréis el juicio del infierno?
Por tanto, he aquí, yo envío á vosotros profetas, y sabios, y escribas: y de ellos, á unos mataréis y crucificaréis, y á otros de ellos azotaréis en vuestras sinagogas, y perseguiréis de ciudad en ciudad:
Para que venga sobre vosotros toda la sangre justa que se ha derramado sobre la tierra, desde la sangre de Abel el justo, hasta la sangre de Zacarías, hijo de Barachîas, al cual matasteis entre el templo y el altar.
De cierto os digo que todo esto vendrá sobre esta generación.
¡Jerusalem, Jerusalem, que matas á los profetas, y apedreas á los que son enviados á ti! ¡cuántas veces quise juntar tus hijos, como la gallina junta sus pollos debajo de las alas, y no quisiste!
He aquí vuestra casa os es dejada desierta.
Porque os digo que desde ahora no me veréis, hasta que digáis: Bendito el que viene en el nombre del Señor.
Y salido Jesús, íbase del templo; y se llegaron sus discípulos, para mostrarle los edificios del templo.
Y respondiendo él, les dijo: ¿Veis todo esto? de cierto os digo, que no será dejada aquí piedra sobre piedra, que no sea destruída.
Y sentándose él en el monte de las Olivas, se llegaron á él los discípulos aparte, diciendo: Dinos, ¿cuándo serán estas cosas, y qué señal habrá de tu venida, y del fin del mundo?
Y respondiendo Jesús, les dijo: Mirad que nadie os engañe.
Porque vendrán muchos en mi nombre, diciendo: Yo soy el Cristo; y á muchos engañarán.
Y oiréis guerras, y rumores de guerras: mirad que no os turbéis; porque es menester que todo esto acontezca; mas aún no es el fin.
Porque se levantará nación contra nación, y reino contra reino; y habrá pestilencias, y hambres, y terremotos por los lugares.
Y todas estas cosas, principio de dolores.
Entonces os entregarán para ser afligidos, y os matarán; y seréis aborrecidos de todas las gentes por causa de mi nombre.
Y muchos entonces serán escandalizados; y se entregarán unos á otros, y unos á otros se aborrecerán.
Y muchos falsos profetas se levantarán y engañarán á muchos.
Y por haberse multiplicado la maldad, la caridad de muchos se resfriará.
Mas el que perseverare hasta el fin, éste será salvo.
Y será predicado este evangelio del reino en todo el mundo, por testimonio á todos los Gentiles; y entonces vendrá el fin.
Por tanto, cuando viereis la abominación del asolamiento, que fué dicha por Daniel profeta, que estará en el lugar santo, (el que lee, entienda),
Entonces los que están en Judea, huyan á los montes;
Y el que sobre el terrado, no descienda á tomar algo de su casa;
Y el que en el campo, no vuelva atrás á tomar sus vestidos.
Mas ¡ay de las preñadas, y de las que crían en aquellos días!
Orad, pues, que vuestra huída no sea en invierno ni en sábado;
Porque habrá entonces grande aflicción, cual no fué desde el principio del mundo hasta ahora, ni será.
Y si aquellos días no fuesen acortados, ninguna carne sería salva; mas por causa de los escogidos, aquellos días serán acortados.
Entonces, si alguno os dijere: He aquí está el Cristo, ó allí, no creáis.
Porque se levantarán falsos Cristos, y falsos profetas, y darán señales grandes y prodigios; de tal manera que engañarán, si es posible, aun á los escogidos.
He aquí os lo he dicho antes.
Así que, si os dijeren: He aquí en el desierto está; no salgáis: He aquí en las cámaras; no creáis.
Porque como el relámpago que sale del oriente y se muestra hasta el occidente, así será también la venida del Hijo del hombre.
Porque donde quiera que estuviere el cuerpo muerto, allí se juntarán las águilas.
Y luego después de la aflicción de aquellos días, el sol se obscurecerá, y la luna no dará su lumbre, y las estrellas caerán del cielo, y las virtudes de los cielos serán conmovidas.
Y entonces se mostrará la señal del Hijo del hombre en el cielo; y entonces lamentarán todas las tribus de la tierra, y verán al Hijo del hombre que vendrá sobre las nubes del cielo, con grande poder y gloria.
Y enviará sus ángeles con gran voz de trompeta, y juntarán sus escogidos de los cuatro vientos, de un cabo del cielo hasta el otro.
De la higuera aprended la parábola: Cuando ya su rama se enternece, y las hojas brotan, sabéis que el verano está cerca.
Así también vosotros, cuando viereis todas estas cosas, sabed que está cercano, á las puertas.
De cierto os digo, que no pasará esta generación, que todas estas cosas no acontezcan.
El cielo y la tierra pasarán, mas mis palabras no pasarán.
Empero del día y hora nadie sabe, ni aun los ángeles de los cielos, sino mi Padre solo.
Mas como los días de Noé, así será la venida del Hijo del hombre.
Porque como en los días antes del diluvio estaban comiendo y bebiendo, casándose y dando en casamiento, hasta el día que Noé entró en el arca,
Y no conocieron hasta que vino el diluvio y llevó á todos, así será también la venida del Hijo del hombre.
Entonces estarán dos en el campo; el uno será tomado, y el otro será dejado:
Dos mujeres moliendo á un molinillo; la una será tomada, y la otra será dejada.
Velad pues, porque no sabéis á qué hora ha de venir vuestro Señor.
Esto empero sabed, que si el padre de la familia supiese á cuál vela el ladrón había de venir, velaría, y no dejaría minar su casa.
Por tanto, también vosotros estad apercibidos; porque el Hijo del hombre ha de venir á la hora que no pensáis.
¿Quién pues es el siervo fiel y prudente, al cual puso su señor sobre su familia para que les dé alimento á tiempo?
Bienaventurado aquel siervo, al cual, cuando su señor viniere, le hallare haciendo así.
De cierto os digo, que sobre todos sus bienes le pondrá.
Y si aquel siervo malo dijere en su corazón: Mi señor se tarda en venir:
Y comenzare á herir á sus consiervos, y aun á comer y á beber con los borrachos;
Vendrá el señor de aquel siervo en el día que no espera, y á la hora que no sabe,
Y le cortará por medio, y pondrá su parte con los hipócritas: allí será el lloro y el crujir de dientes.
Y aconteció que, como hubo acabado Jesús todas estas palabras, dijo á sus discípulos:
Sabéis que dentro de dos días se hace la pascua, y el Hijo del hombre es entregado para ser crucificado.
Entonces los príncipes de los sacerdotes, y los escribas, y los ancianos del pueblo se juntaron al patio del pontífice, el cual se llamaba Caifás;
Y tuvieron consejo para prender por engaño á Jesús, y matarle.
Y decían: No en el día de la fiesta, porque no se haga alboroto en el pueblo.
Y estando Jesús en Bethania, en casa de Simón el leproso,
Vino á él una mujer, teniendo un vaso de alabastro de ungüento de gran precio, y lo derramó sobre la cabeza de él, estando sentado á la mesa.
Lo cual viendo sus discípulos, se enojaron, diciendo: ¿Por qué se pierde esto?
Porque esto se podía vender por gran precio, y darse á los pobres.
Y entendiéndolo Jesús, les dijo: ¿Por qué dais pena á esta mujer? pues ha hecho conmigo buena obra.
Porque siempre tendréis pobres con vosotros, mas á mí no siempre me tendréis.
Porque echando este ungüento sobre mi cuerpo, para sepultarme lo ha hecho.
De cierto os digo, que donde quiera que este evangelio fuere predicado en todo el mundo, también será dicho para memoria de ella, lo que ésta ha hecho.
Entonces uno de los doce, que se llamaba Judas Iscariote, fué á los príncipes de los sacerdotes,
Y les dijo: ¿Qué me queréis dar, y yo os lo entregaré? Y ellos le señalaron treinta piezas de plata.
Y desde entonces buscaba oportunidad para entregarle.
Y el primer día de la fiesta de los panes sin levadura, vinieron los discípulos á Jesús, diciéndole: ¿Dónde quieres que aderecemos para ti para comer la pascua?
Y él dijo: Id á la ciudad á cierto hombre, y decidle: El Maestro dice: Mi tiempo está cerca; en tu casa haré la pascua con mis discípulos.
Y los discípulos hicieron como Jesús les mandó, y aderezaron la pascua.
Y como fué la tarde del día, se sentó á la mesa con los doce.
Y comiendo ellos, dijo: De cierto os digo, que uno de vosotros me ha de entregar.
Y entristecidos ellos en gran manera, comenzó cada uno de ellos á decirle: ¿Soy yo, Señor?
Entonces él respondiendo, dijo: El que mete la mano conmigo en el plato, ése me ha de entregar.
A la verdad el Hijo del hombre va, como está escrito de él; mas ¡ay de aquel hombre por quien el Hijo del hombre es entregado! bueno le fuera al tal hombre no haber nacido.
Entonces respondiendo Judas, que le entregaba, dijo: ¿Soy yo, Maestro? Dícele: Tú lo has dicho.
Y comiendo ellos, tomó Jesús el pan, y bendijo, y lo partió, y dió á sus discípulos, y dijo: Tomad, comed: esto es mi cuerpo.
Y tomando el vaso, y hechas gracias, les dió, diciendo: Bebed de él todos;
Porque esto es mi sangre del nuevo pacto, la cual es derramada por muchos para remisión de los pecados.
Y os digo, que desde ahora no beberé más de este fruto de la vid, hasta aquel día, cuando lo tengo de beber nuevo con vosotros en el reino de mi Padre.
Y habiendo cantado el himno, salieron al monte de las Olivas.
Entonces Jesús les dice: Todos vosotros seréis escandalizados en mí esta noche; porque escrito está: Heriré al Pastor, y las ovejas de la manada serán dispersas.
Mas después que haya resucitado, iré delante de vosotros á Galilea.
Y respondiendo Pedro, le dijo: Aunque todos sean escandalizados en ti, yo nunca seré escandalizado.
Jesús le dice: De cierto te digo que esta noche, antes que el gallo cante, me negarás tres veces.
Dícele Pedro: Aunque me sea menester morir contigo, no te negaré. Y todos los discípulos dijeron lo mismo.
Entonces llegó Jesús con ellos á la aldea que se llama Gethsemaní, y dice á sus discípulos: Sentaos aquí, hasta que vaya allí y ore.
Y tomando á Pedro, y á los dos hijos de Zebedeo, comenzó á entristecerse y á angustiarse en gran manera.
Entonces Jesús les dice: Mi alma está muy triste hasta la muerte; quedaos aquí, y velad conmigo.
Y yéndose un poco más adelante, se postró sobre su rostro, orando, y diciendo: Padre mío, si es posible, pase de mí este vaso; empero no como yo quiero, sino como tú.
Y vino á sus discípulos, y los halló durmiendo, y dijo á Pedro: ¿Así no habéis podido velar conmigo una hora?
Velad y orad, para que no entréis en tentación: el espíritu á la verdad está presto, mas la carne enferma.
Otra vez fué, segunda vez, y oró diciendo: Padre mío, si no puede este vaso pasar de mí sin que yo lo beba, hágase tu voluntad.
Y vino, y los halló otra vez durmiendo; porque los ojos de ellos estaban agravados.
Y dejándolos fuése de nuevo, y oró tercera vez, diciendo las mismas palabras.
Entonces vino á sus discípulos y díceles: Dormid ya, y descansad: he aquí ha llegado la hora, y el Hijo del hombre es entregado en manos de pecadores.
Levantaos, vamos: he aquí ha llegado el que me ha entregado.
Y hablando aún él, he aquí Judas, uno de los doce, vino, y con él mucha gente con espadas y con palos, de parte de los príncipes de los sacerdotes, y de los ancianos del pueblo.
Y el que le entregaba les había dado señal, diciendo: Al que yo besare, aquél es: prendedle.
Y luego que llegó á Jesús, dijo: Salve, Maestro. Y le besó.
Y Jesús le dijo: Amigo, ¿á qué vienes? Entonces llegaron, y echaron mano á Jesús, y le prendieron.
Y he aquí, uno de los que estaban con Jesús, extendiendo la mano, sacó su espada, é hiriendo á un siervo del pontífice, le quitó la oreja.
Entonces Jesús le dice: Vuelve tu espada á su lugar; porque todos los que tomaren espada, á espada perecerán.
¿Acaso piensas que no puedo ahora orar á mi Padre, y él me daría más de doce legiones de ángeles?
¿Cómo, pues, se cumplirían las Escrituras, que así conviene que sea hecho?
En aquella hora dijo Jesús á las gentes: ¿Como á ladrón habéis salido con espadas y con palos á prenderme? Cada día me sentaba con vosotros enseñando en el templo, y no me prendisteis.
Mas todo esto se hace, para que se cumplan las Escrituras de los profetas. Entonces todos los discípulos huyeron, dejándole.
Y ellos, prendido Jesús, le llevaron á Caifás pontífice, donde los escribas y los ancianos estaban juntos.
Mas Pedro le seguía de lejos hasta el patio del pontífice; y entrando dentro, estábase sentado con los criados, para ver el fin.
Y los príncipes de los sacerdotes, y los ancianos, y todo el consejo, buscaban falso testimonio contra Jesús, para entregarle á la muerte;
Y no lo hallaron, aunque muchos testigos falsos se llegaban; mas á la postre vinieron dos testigos falsos,
Que dijeron: Este dijo: Puedo derribar el templo de Dios, y en tres días reedificarlo.
Y levantándose el pontífice, le dijo: ¿No respondes nada? ¿qué testifican éstos contra ti?
Mas Jesús callaba. Respondiendo el pontífice, le dijo: Te conjuro por el Dios viviente, que nos digas si eres tú el Cristo, Hijo de Dios.
Jesús le dijo: Tú lo has dicho: y aun os digo, que desde ahora habéis de ver al Hijo del hombre sentado á la diestra de la potencia de Dios, y que viene en las nubes del cielo.
Entonces el pontífice rasgó sus vestidos, diciendo: Blasfemado ha: ¿qué más necesidad tenemos de testigos? He aquí, ahora habéis oído su blasfemia.
¿Qué os parece? Y respondiendo ellos, dijeron: Culpado es de muerte.
Entonces le escupieron en el rostro, y le dieron de bofetadas; y otros le herían con mojicones,
Diciendo: Profetízanos tú, Cristo, quién es el que te ha herido.
Y Pedro estaba sentado fuera en el patio: y se llegó á él una criada, diciendo: Y tú con Jesús el Galileo estabas.
Mas él negó delante de todos, diciendo: No sé lo que dices.
Y saliendo él á la puerta, le vió otra, y dijo á los que estaban allí: También éste estaba con Jesús Nazareno.
Y negó otra vez con juramento: No conozco al hombre.
Y un poco después llegaron los que estaban por allí, y dijeron á Pedro: Verdaderamente también tú eres de ellos, porque aun tu habla te hace manifiesto.
Entonces comenzó á hacer imprecaciones, y á jurar, diciendo: No conozco al hombre. Y el gallo cantó luego.
Y se acordó Pedro de las palabras de Jesús, que le dijo: Antes que cante el gallo, me negarás tres veces. Y saliéndose fuera, lloró amargamente.
Y venida la mañana, entraron en consejo todos los príncipes de los sacerdotes, y los ancianos del pueblo, contra Jesús, para entregarle á muerte.
Y le llevaron atado, y le entregaron á Poncio Pilato presidente.
Entonces Judas, el que le había entregado, viendo que era condenado, volvió arrepentido las treinta piezas de plata á los príncipes de los sacerdotes y á los ancianos,
Diciendo: Yo he pecado entregando la sangre inocente. Mas ellos dijeron: ¿Qué se nos da á nosotros? Viéras lo tú.
Y arrojando las piezas de plata en el templo, partióse; y fué, y se ahorcó.
Y los príncipes de los sacerdotes, tomando las piezas de plata, dijeron: No es lícito echarlas en el tesoro de los dones, porque es precio de sangre.
Mas habido consejo, compraron con ellas el campo del alfarero, por sepultura para los extranjeros.
Por lo cual fué llamado aquel campo, Campo de sangre, hasta el día de hoy.
Entonces se cumplió lo que fué dicho por el profeta Jeremías, que dijo: Y tomaron las treinta piezas de plata, precio del apreciado, que fué apreciado por los hijos de Israel;
Y las dieron para el campo del alfarero, como me ordenó el Señor.
Y Jesús estuvo delante del presidente; y el presidente le preguntó, diciendo: ¿Eres tú el Rey de los judíos? Y Jesús le dijo: Tú lo dices.
Y siendo acusado por los príncipes de los sacerdotes, y por los ancianos, nada respondió.
Pilato entonces le dice: ¿No oyes cuántas cosas testifican contra ti?
Y no le respondió ni una palabra; de tal manera que el presidente se maravillaba mucho.
Y en el día de la fiesta acostumbraba el presidente soltar al pueblo un preso, cual quisiesen.
Y tenían entonces un preso famoso que se llamaba Barrabás.
Y juntos ellos, les dijo Pilato: ¿Cuál queréis que os suelte? ¿á Barrabás, ó á Jesús que se dice el Cristo?
Porque sabía que por envidia le habían entregado.
Y estando él sentado en el tribunal, su mujer envió á él, diciendo: No tengas que ver con aquel justo; porque hoy he padecido muchas cosas en sueños por causa de él.
Mas los príncipes de los sacerdotes y los ancianos, persuadieron al pueblo que pidiese á Barrabás, y á Jesús matase.
Y respondiendo el presidente les dijo: ¿Cuál de los dos queréis que os suelte? Y ellos dijeron: A Barrabás.
Pilato les dijo: ¿Qué pues haré de Jesús que se dice el Cristo? Dícenle todos: Sea crucificado.
Y el presidente les dijo: Pues ¿qué mal ha hecho? Mas ellos gritaban más, diciendo: Sea crucificado.
Y viendo Pilato que nada adelantaba, antes se hacía más alboroto, tomando agua se lavó las manos delante del pueblo, diciendo: Inocente soy yo de la sangre de este justo: veréis lo vosotros.
Y respondiendo todo el pueblo, dijo: Su sangre sea sobre nosotros, y sobre nuestros hijos.
Entonces les soltó á Barrabás: y habiendo azotado á Jesús, le entregó para ser crucificado.
Entonces los soldados del presidente llevaron á Jesús al pretorio, y juntaron á él toda la cuadrilla;
Y desnudándole, le echaron encima un manto de grana;
Y pusieron sobre su cabeza una corona tejida de espinas, y una caña en su mano derecha; é hincando la rodilla delante de él, le burlaban, diciendo: ¡Salve, Rey de los Judíos!
Y escupiendo en él, tomaron la caña, y le herían en la cabeza.
Y después que le hubieron escarnecido, le desnudaron el manto, y le vistieron de sus vestidos, y le llevaron para crucificarle.
Y saliendo, hallaron á un Cireneo, que se llamaba Simón: á éste cargaron para que llevase su cruz.
Y como llegaron al lugar que se llama Gólgotha, que es dicho, El lugar de la calavera,
Le dieron á beber vinagre mezclado con hiel; y gustando, no quiso beber lo.
Y después que le hubieron crucificado, repartieron sus vestidos, echando suertes: para que se cumpliese lo que fué dicho por el profeta: Se repartieron mis vestidos, y sobre mi ropa echaron suertes.
Y sentados le guardaban allí.
Y pusieron sobre su cabeza su causa escrita: ESTE ES JESUS EL REY DE LOS JUDIOS.
Entonces crucificaron con él dos ladrones, uno á la derecha, y otro á la izquierda.
Y los que pasaban, le decían injurias, meneando sus cabezas,
Y diciendo: Tú, el que derribas el templo, y en tres días lo reedificas, sálvate á ti mismo: si eres Hijo de Dios, desciende de la cruz.
De esta manera también los príncipes de los sacerdotes, escarneciendo con los escribas y los Fariseos y los ancianos, decían:
A otros salvó, á sí mismo no puede salvar: si es el Rey de Israel, descienda ahora de la cruz, y creeremos en él.
Confió en Dios: líbrele ahora si le quiere: porque ha dicho: Soy Hijo de Dios.
Lo mismo también le zaherían los ladrones que estaban crucificados con él.
Y desde la hora de sexta fueron tinieblas sobre toda la tierra hasta la hora de nona.
Y cerca de la hora de nona, Jesús exclamó con grande voz, diciendo: Eli, Eli, ¿lama sabachtani? Esto es: Dios mío, Dios mío, ¿por qué me has desamparado?
Y algunos de los que estaban allí, oyéndolo, decían: A Elías llama éste.
Y luego, corriendo uno de ellos, tomó una esponja, y la hinchió de vinagre, y poniéndola en una caña, dábale de beber.
Y los otros decían: Deja, veamos si viene Elías á librarle.
Mas Jesús, habiendo otra vez exclamado con grande voz, dió el espíritu.
Y he aquí, el velo del templo se rompió en dos, de alto á bajo: y la tierra tembló, y las piedras se hendieron;
Y abriéronse los sepulcros, y muchos cuerpos de santos que habían dormido, se levantaron;
Y salidos de los sepulcros, después de su resurrección, vinieron á la santa ciudad, y aparecieron á muchos.
Y el centurión, y los que estaban con él guardando á Jesús, visto el terremoto, y las cosas que habían sido hechas, temieron en gran manera, diciendo: Verdaderamente Hijo de Dios era éste.
Y estaban allí muchas mujeres mirando de lejos, las cuales habían seguido de Galilea á Jesús, sirviéndole:
Entre las cuales estaban María Magdalena, y María la madre de Jacobo y de José, y la madre de los hijos de Zebedeo.
Y como fué la tarde del día, vino un hombre rico de Arimatea, llamado José, el cual también había sido discípulo de Jesús.
Este llegó á Pilato, y pidió el cuerpo de Jesús: entonces Pilato mandó que se le diese el cuerpo.
Y tomando José el cuerpo, lo envolvió en una sábana limpia,
Y lo puso en su sepulcro nuevo, que había labrado en la peña: y revuelta una grande piedra á la puerta del sepulcro, se fué.
Y estaban allí María Magdalena, y la otra María, sentadas delante del sepulcro.
Y el siguiente día, que es después de la preparación, se juntaron los príncipes de los sacerdotes y los Fariseos á Pilato,
Diciendo: Señor, nos acordamos que aquel engañador dijo, viviendo aún: Después de tres días resucitaré.
Manda, pues, que se asegure el sepulcro hasta el día tercero; porque no vengan sus discípulos de noche, y le hurten, y digan al pueblo: Resucitó de los muertos. Y será el postrer error peor que el primero.
Y Pilato les dijo: Tenéis una guardia: id, aseguradlo como sabéis.
Y yendo ellos, aseguraron el sepulcro, sellando la piedra, con la guardia.
Y la víspera de sábado, que amanece para el primer día de la semana, vino María Magdalena, y la otra María, á ver el sepulcro.
Y he aquí, fué hecho un gran terremoto: porque el ángel del Señor, descendiendo del cielo y llegando, había revuelto la piedra, y estaba sentado sobre ella.
Y su aspecto era como un relámpago, y su vestido blanco como la nieve.
Y de miedo de él los guardas se asombraron, y fueron vueltos como muertos.
Y respondiendo el ángel, dijo á las mujeres: No temáis vosotras; porque yo sé que buscáis á Jesús, que fué crucificado.
No está aquí; porque ha resucitado, como dijo. Venid, ved el lugar donde fué puesto el Señor.
E id presto, decid á sus discípulos que ha resucitado de los muertos: y he aquí va delante de vosotros á Galilea; allí le veréis; he aquí, os lo he dicho.
Entonces ellas, saliendo del sepulcro con temor y gran gozo, fueron corriendo á dar las nuevas á sus discípulos. Y mientras iban á dar las nuevas á sus discípulos,
He aquí, Jesús les sale al encuentro, diciendo: Salve. Y ellas se llegaron y abrazaron sus pies, y le adoraron.
Entonces Jesús les dice: No temáis: id, dad las nuevas á mis hermanos, para que vayan á Galilea, y allí me verán.
Y yendo ellas, he aquí unos de la guardia vinieron á la ciudad, y dieron aviso á los príncipes de los sacerdotes de todas las cosas que habían acontecido.
Y juntados con los ancianos, y habido consejo, dieron mucho dinero á los soldados,
Diciendo: Decid: Sus discípulos vinieron de noche, y le hurtaron, durmiendo nosotros.
Y si esto fuere oído del presidente, nosotros le persuadiremos, y os haremos seguros.
Y ellos, tomando el dinero, hicieron como estaban instruídos: y este dicho fué divulgado entre los Judíos hasta el día de hoy.
Mas los once discípulos se fueron á Galilea, al monte donde Jesús les había ordenado.
Y como le vieron, le adoraron: mas algunos dudaban.
Y llegando Jesús, les habló, diciendo: Toda potestad me es dada en el cielo y en la tierra.
Por tanto, id, y doctrinad á todos los Gentiles, bautizándolos en el nombre del Padre, y del Hijo, y del Espíritu Santo:
Enseñándoles que guarden todas las cosas que os he mandado: y he aquí, yo estoy con vosotros todos los días, hasta el fin del mundo. Amén.
Principio del evangelio de Jesucristo, Hijo de Dios.
Como está escrito en Isaías el profeta: He aquí yo envío á mi mensajero delante de tu faz, que apareje tu camino delante de ti.
Voz del que clama en el desierto: Aparejad el camino del Señor; enderezad sus veredas.
Bautizaba Juan en el desierto, y predicaba el bautismo del arrepentimiento para remisión de pecados.
Y salía á él toda la provincia de Judea, y los de Jerusalem; y eran todos bautizados por él en el río de Jordán, confesando sus pecados.
Y Juan andaba vestido de pelos de camello, y con un cinto de cuero alrededor de sus lomos; y comía langostas y miel silvestre.
Y predicaba, diciendo: Viene tras mí el que es más poderoso que yo, al cual no soy digno de desatar encorvado la correa de sus zapatos.
Yo á la verdad os he bautizado con agua; mas él os bautizará con Espíritu Santo.
Y aconteció en aquellos días, que Jesús vino de Nazaret de Galilea, y fué bautizado por Juan en el Jordán.
Y luego, subiendo del agua, vió abrirse los cielos, y al Espíritu como paloma, que descendía sobre él.
Y hubo una voz de los cielos que decía: Tú eres mi Hijo amado; en ti tomo contentamiento.
Y luego el Espíritu le impele al desierto.
Y estuvo allí en el desierto cuarenta días, y era tentado de Satanás; y estaba con las fieras; y los ángeles le servían.
Mas después que Juan fué encarcelado, Jesús vino á Galilea predicando el evangelio del reino de Dios,
Y diciendo: El tiempo es cumplido, y el reino de Dios está cerca: arrepentíos, y creed al evangelio.
Y pasando junto á la mar de Galilea, vió á Simón, y á Andrés su hermano, que echaban la red en la mar; porque eran pescadores.
Y les dijo Jesús: Venid en pos de mí, y haré que seáis pescadores de hombres.
Y luego, dejadas sus redes, le siguieron.
Y pasando de allí un poco más adelante, vió á Jacobo, hijo de Zebedeo, y á Juan su hermano, también ellos en el navío, que aderezaban las redes.
Y luego los llamó: y dejando á su padre Zebedeo en el barco con los jornaleros, fueron en pos de él.
Y entraron en Capernaum; y luego los sábados, entrando en la sinagoga, enseñaba.
Y se admiraban de su doctrina; porque les enseñaba como quien tiene potestad, y no como los escribas.
Y había en la sinagoga de ellos un hombre con espíritu inmundo, el cual dió voces,
Diciendo: ¡Ah! ¿qué tienes con nosotros, Jesús Nazareno? ¿Has venido á destruirnos? Sé quién eres, el Santo de Dios.
Y Jesús le riñó, diciendo: Enmudece, y sal de él.
Y el espíritu inmundo, haciéndole pedazos, y clamando á gran voz, salió de él.
Y todos se maravillaron, de tal manera que inquirían entre sí, diciendo: ¿Qué es esto? ¿Qué nueva doctrina es ésta, que con potestad aun á los espíritus inmundos manda, y le obedecen?
Y vino luego su fama por toda la provincia alrededor de Galilea.
Y luego saliendo de la sinagoga, vinieron á casa de Simón y de Andrés, con Jacobo y Juan.
Y la suegra de Simón estaba acostada con calentura; y le hablaron luego de ella.
Entonces llegando él, la tomó de su mano y la levantó; y luego la dejó la calentura, y les servía.
Y cuando fué la tarde, luego que el sol se puso, traían á él todos los que tenían mal, y endemoniados;
Y toda la ciudad se juntó á la puerta.
Y sanó á muchos que estaban enfermos de diversas enfermedades, y echó fuera muchos demonios; y no dejaba decir á los demonios que le conocían.
Y levantándose muy de mañana, aun muy de noche, salió y se fué á un lugar desierto, y allí oraba.
Y le siguió Simón, y los que estaban con él;
Y hallándole, le dicen: Todos te buscan.
Y les dice: Vamos á los lugares vecinos, para que predique también allí; porque para esto he venido.
Y predicaba en las sinagogas de ellos en toda Galilea, y echaba fuera los demonios.
Y un leproso vino á él, rogándole; é hincada la rodilla, le dice: Si quieres, puedes limpiarme.
Y Jesús, teniendo misericordia de él, extendió su mano, y le tocó, y le dice: Quiero, sé limpio.
Y así que hubo él hablado, la lepra se fué luego de aquél, y fué limpio.
Entonces le apercibió, y despidióle luego,
Y le dice: Mira, no digas á nadie nada; sino ve, muéstrate al sacerdote, y ofrece por tu limpieza lo que Moisés mandó, para testimonio á ellos.
Mas él salido, comenzó á publicarlo mucho, y á divulgar el hecho, de manera que ya Jesús no podía entrar manifiestamente en la ciudad, sino que estaba fuera en los lugares desiertos; y venían á él de todas partes.
Y otra vez entró en la sinagoga; y había allí un hombre que tenía una mano seca.
Y le acechaban si en sábado le sanaría, para acusarle.
Entonces dijo al hombre que tenía la mano seca: Levántate en medio.
Y les dice: ¿Es lícito hacer bien en sábado, ó hacer mal? ¿salvar la vida, ó quitarla? Mas ellos callaban.
Y mirándolos alrededor con enojo, condoleciéndose de la ceguedad de su corazón, dice al hombre: Extiende tu mano. Y la extendió, y su mano fué restituída sana.
Entonces saliendo los Fariseos, tomaron consejo con los Herodianos contra él, para matarle.
Mas Jesús se apartó á la mar con sus discípulos: y le siguió gran multitud de Galilea, y de Judea,
Y de Jerusalem, y de Idumea, y de la otra parte del Jordán. Y los de alrededor de Tiro y de Sidón, grande multitud, oyendo cuán grandes cosas hacía, vinieron á él.
Y dijo á sus discípulos que le estuviese siempre apercibida la barquilla, por causa del gentío, para que no le oprimiesen.
Porque había sanado á muchos; de manera que caían sobre él cuantos tenían plagas, por tocarle.
Y los espíritus inmundos, al verle, se postraban delante de él, y daban voces, diciendo: Tú eres el Hijo de Dios.
Mas él les reñía mucho que no le manifestasen.
Y subió al monte, y llamó á sí á los que él quiso; y vinieron á él.
Y estableció doce, para que estuviesen con él, y para enviarlos á predicar,
Y que tuviesen potestad de sanar enfermedades, y de echar fuera demonios:
A Simón, al cual puso por nombre Pedro;
Y á Jacobo, hijo de Zebedeo, y á Juan hermano de Jacobo; y les apellidó Boanerges, que es, Hijos del trueno;
Y á Andrés, y á Felipe, y á Bartolomé, y á Mateo, y á Tomás, y á Jacobo hijo de Alfeo, y á Tadeo, y á Simón el Cananita,
Y á Judas Iscariote, el que le entregó. Y vinieron á casa.
Y agolpóse de nuevo la gente, de modo que ellos ni aun podían comer pan.
Y como lo oyeron los suyos, vinieron para prenderle: porque decían: Está fuera de sí.
Y los escribas que habían venido de Jerusalem, decían que tenía á Beelzebub, y que por el príncipe de los demonios echaba fuera los demonios.
Y habiéndolos llamado, les decía en parábolas: ¿Cómo puede Satanás echar fuera á Satanás?
Y si algún reino contra sí mismo fuere dividido, no puede permanecer el tal reino.
Y si alguna casa fuere dividida contra sí misma, no puede permanecer la tal casa.
Y si Satanás se levantare contra sí mismo, y fuere dividido, no puede permanecer; antes tiene fin.
Nadie puede saquear las alhajas del valiente entrando en su casa, si antes no atare al valiente y entonces saqueará su casa.
De cierto os digo que todos los pecados serán perdonados á los hijos de los hombres, y las blasfemias cualesquiera con que blasfemaren;
Mas cualquiera que blasfemare contra el Espíritu Santo, no tiene jamás perdón, mas está expuesto á eterno juicio.
Porque decían: Tiene espíritu inmundo.
Vienen después sus hermanos y su madre, y estando fuera, enviaron á él llamándole.
Y la gente estaba sentada alrededor de él, y le dijeron: He aquí, tu madre y tus hermanos te buscan fuera.
Y él les respondió, diciendo: ¿Quién es mi madre y mis hermanos?
Y mirando á los que estaban sentados alrededor de él, dijo: He aquí mi madre y hermanos.
Porque cualquiera que hiciere la voluntad de Dios, éste es mi hermano, y mi hermana, y mi madre.
Y otra vez comenzó á enseñar junto á la mar, y se juntó á él mucha gente; tanto, que entrándose él en un barco, se sentó en la mar: y toda la gente estaba en tierra junto á la mar.
Y les enseñaba por parábolas muchas cosas, y les decía en su doctrina:
Oid: He aquí, el sembrador salió á sembrar.
Y aconteció sembrando, que una parte cayó junto al camino; y vinieron las aves del cielo, y la tragaron.
Y otra parte cayó en pedregales, donde no tenía mucha tierra; y luego salió, porque no tenía la tierra profunda:
Mas salido el sol, se quemó; y por cuanto no tenía raíz, se secó.
Y otra parte cayó en espinas; y subieron las espinas, y la ahogaron, y no dió fruto.
Y otra parte cayó en buena tierra, y dió fruto, que subió y creció: y llevó uno á treinta, y otro á sesenta, y otro á ciento.
Entonces les dijo: El que tiene oídos para oir, oiga.
Y cuando estuvo solo, le preguntaron los que estaban cerca de él con los doce, sobre la parábola.
Y les dijo: A vosotros es dado saber el misterio del reino de Dios; mas á los que están fuera, por parábolas todas las cosas;
Para que viendo, vean y no echen de ver; y oyendo, oigan y no entiendan: porque no se conviertan, y les sean perdonados los pecados.
Y les dijo: ¿No sabéis esta parábola? ¿Cómo, pues, entenderéis todas las parábolas?
El que siembra es el que siembra la palabra.
Y éstos son los de junto al camino: en los que la palabra es sembrada: mas después que la oyeron, luego viene Satanás, y quita la palabra que fué sembrada en sus corazones.
Y asimismo éstos son los que son sembrados en pedregales: los que cuando han oído la palabra, luego la toman con gozo;
Mas no tienen raíz en sí, antes son temporales, que en levantándose la tribulación ó la persecución por causa de la palabra, luego se escandalizan.
Y éstos son los que son sembrados entre espinas: los que oyen la palabra;
Mas los cuidados de este siglo, y el engaño de las riquezas, y las codicias que hay en las otras cosas, entrando, ahogan la palabra, y se hace infructuosa.
Y éstos son los que fueron sembrados en buena tierra: los que oyen la palabra, y la reciben, y hacen fruto, uno á treinta, otro á sesenta, y otro á ciento.
También les dijo: ¿Tráese la antorcha para ser puesta debajo del almud, ó debajo de la cama? ¿No es para ser puesta en el candelero?
Porque no hay nada oculto que no haya de ser manifestado, ni secreto que no haya de descubrirse.
Si alguno tiene oídos para oir, oiga.
Les dijo también: Mirad lo que oís: con la medida que medís, os medirán otros, y será añadido á vosotros los que oís.
Porque al que tiene, le será dado; y al que no tiene, aun lo que tiene le será quitado.
Decía más: Así es el reino de Dios, como si un hombre echa simiente en la tierra;
Y duerme, y se levanta de noche y de día, y la simiente brota y crece como él no sabe.
Porque de suyo fructifica la tierra, primero hierba, luego espiga, después grano lleno en la espiga;
Y cuando el fruto fuere producido, luego se mete la hoz, porque la siega es llegada.
Y decía: ¿A qué haremos semejante el reino de Dios? ¿ó con qué parábola le compararemos?
Es como el grano de mostaza, que, cuando se siembra en tierra, es la más pequeña de todas las simientes que hay en la tierra;
Mas después de sembrado, sube, y se hace la mayor de todas las legumbres, y echa grandes ramas, de tal manera que las aves del cielo puedan morar bajo su sombra.
Y con muchas tales parábolas les hablaba la palabra, conforme á lo que podían oir.
Y sin parábola no les hablaba; mas á sus discípulos en particular declaraba todo.
Y les dijo aquel día cuando fué tarde: Pasemos de la otra parte.
Y despachando la multitud, le tomaron como estaba, en el barco; y había también con él otros barquitos.
Y se levantó una grande tempestad de viento, y echaba las olas en el barco, de tal manera que ya se henchía.
Y él estaba en la popa, durmiendo sobre un cabezal, y le despertaron, y le dicen: ¿Maestro, no tienes cuidado que perecemos?
Y levantándose, increpó al viento, y dijo á la mar: Calla, enmudece. Y cesó el viento, y fué hecha grande bonanza.
Y á ellos dijo: ¿Por qué estáis así amedrentados? ¿Cómo no tenéis fe?
Y temieron con gran temor, y decían el uno al otro. ¿Quién es éste, que aun el viento y la mar le obedecen?
Y vinieron de la otra parte de la mar á la provincia de los Gadarenos.
Y salido él del barco, luego le salió al encuentro, de los sepulcros, un hombre con un espíritu inmundo,
Que tenía domicilio en los sepulcros, y ni aun con cadenas le podía alguien atar;
Porque muchas veces había sido atado con grillos y cadenas, mas las cadenas habían sido hechas pedazos por él, y los grillos desmenuzados; y nadie le podía domar.
Y siempre, de día y de noche, andaba dando voces en los montes y en los sepulcros, é hiriéndose con las piedras.
Y como vió á Jesús de lejos, corrió, y le adoró.
Y clamando á gran voz, dijo: ¿Qué tienes conmigo, Jesús, Hijo del Dios Altísimo? Te conjuro por Dios que no me atormentes.
Porque le decía: Sal de este hombre, espíritu inmundo.
Y le preguntó: ¿Cómo te llamas? Y respondió diciendo: Legión me llamo; porque somos muchos.
Y le rogaba mucho que no le enviase fuera de aquella provincia.
Y estaba allí cerca del monte una grande manada de puercos paciendo.
Y le rogaron todos los demonios, diciendo: Envíanos á los puercos para que entremos en ellos.
Y luego Jesús se lo permitió. Y saliendo aquellos espíritus inmundos, entraron en los puercos, y la manada cayó por un despeñadero en la mar; los cuales eran como dos mil; y en la mar se ahogaron.
Y los que apacentaban los puercos huyeron, y dieron aviso en la ciudad y en los campos. Y salieron para ver qué era aquello que había acontecido.
Y vienen á Jesús, y ven al que había sido atormentado del demonio, y que había tenido la legión, sentado y vestido, y en su juicio cabal; y tuvieron miedo.
Y les contaron los que lo habían visto, cómo había acontecido al que había tenido el demonio, y lo de los puercos.
Y comenzaron á rogarle que se fuese de los términos de ellos.
Y entrando él en el barco, le rogaba el que había sido fatigado del demonio, para estar con él.
Mas Jesús no le permitió, sino le dijo: Vete á tu casa, á los tuyos, y cuéntales cuán grandes cosas el Señor ha hecho contigo, y cómo ha tenido misericordia de ti.
Y se fué, y comenzó á publicar en Decápolis cuán grandes cosas Jesús había hecho con él: y todos se maravillaban.
Y pasando otra vez Jesús en un barco á la otra parte, se juntó á él gran compañía; y estaba junto á la mar.
Y vino uno de los príncipes de la sinagoga, llamado Jairo; y luego que le vió, se postró á sus pies,
Y le rogaba mucho, diciendo: Mi hija está á la muerte: ven y pondrás las manos sobre ella para que sea salva, y vivirá.
Y fué con él, y le seguía gran compañía, y le apretaban.
Y una mujer que estaba con flujo de sangre doce años hacía,
Y había sufrido mucho de muchos médicos, y había gastado todo lo que tenía, y nada había aprovechado, antes le iba peor,
Como oyó hablar de Jesús, llegó por detrás entre la compañía, y tocó su vestido.
Porque decía: Si tocare tan solamente su vestido, seré salva.
Y luego la fuente de su sangre se secó; y sintió en el cuerpo que estaba sana de aquel azote.
Y luego Jesús, conociendo en sí mismo la virtud que había salido de él, volviéndose á la compañía, dijo: ¿Quién ha tocado mis vestidos?
Y le dijeron sus discípulos: Ves que la multitud te aprieta, y dices: ¿Quién me ha tocado?
Y él miraba alrededor para ver á la que había hecho esto.
Entonces la mujer, temiendo y temblando, sabiendo lo que en sí había sido hecho, vino y se postró delante de él, y le dijo toda la verdad.
Y él le dijo: Hija, tu fe te ha hecho salva: ve en paz, y queda sana de tu azote.
Hablando aún él, vinieron de casa del príncipe de la sinagoga, diciendo: Tu hija es muerta; ¿para qué fatigas más al Maestro?
Mas luego Jesús, oyendo esta razón que se decía, dijo al príncipe de la sinagoga: No temas, cree solamente.
Y no permitió que alguno viniese tras él sino Pedro, y Jacobo, y Juan hermano de Jacobo.
Y vino á casa del príncipe de la sinagoga, y vió el alboroto, los que lloraban y gemían mucho.
Y entrando, les dice: ¿Por qué alborotáis y lloráis? La muchacha no es muerta, mas duerme.
Y hacían burla de él: mas él, echados fuera todos, toma al padre y á la madre de la muchacha, y á los que estaban con él, y entra donde la muchacha estaba.
Y tomando la mano de la muchacha, le dice: Talitha cumi; que es, si lo interpretares: Muchacha, á ti digo, levántate.
Y luego la muchacha se levantó, y andaba; porque tenía doce años. Y se espantaron de grande espanto.
Mas él les mandó mucho que nadie lo supiese, y dijo que le diesen de comer.
Y salió de allí, y vino á su tierra, y le siguieron sus discípulos.
Y llegado el sábado, comenzó á enseñar en la sinagoga; y muchos oyéndole, estaban atónitos, diciendo: ¿De dónde tiene éste estas cosas? ¿Y qué sabiduría es ésta que le es dada, y tales maravillas que por sus manos son hechas?
¿No es éste el carpintero, hijo de María, hermano de Jacobo, y de José, y de Judas, y de Simón? ¿No están también aquí con nosotros, sus hermanas? Y se escandalizaban en él.
Mas Jesús les decía: No hay profeta deshonrado sino en su tierra, y entre sus parientes, y en su casa.
Y no pudo hacer allí alguna maravilla; solamente sanó unos pocos enfermos, poniendo sobre ellos las manos.
Y estaba maravillado de la incredulidad de ellos. Y rodeaba las aldeas de alrededor, enseñando.
Y llamó á los doce, y comenzó á enviarlos de dos en dos: y les dió potestad sobre los espíritus inmundos.
Y les mandó que no llevasen nada para el camino, sino solamente báculo; no alforja, ni pan, ni dinero en la bolsa;
Mas que calzasen sandalias, y no vistiesen dos túnicas.
Y les decía: Donde quiera que entréis en una casa, posad en ella hasta que salgáis de allí.
Y todos aquellos que no os recibieren ni os oyeren, saliendo de allí, sacudid el polvo que está debajo de vuestros pies, en testimonio á ellos. De cierto os digo que más tolerable será el castigo de los de Sodoma y Gomorra el día del juicio, que el de aquella ciudad.
Y saliendo, predicaban que los hombres se arrepintiesen.
Y echaban fuera muchos demonios, y ungían con aceite á muchos enfermos, y sanaban.
Y oyó el rey Herodes la fama de Jesús, porque su nombre se había hecho notorio; y dijo: Juan el que bautizaba, ha resucitado de los muertos, y por tanto, virtudes obran en él.
Otros decían: Elías es. Y otros decían: Profeta es, ó alguno de los profetas.
Y oyéndo lo Herodes, dijo: Este es Juan el que yo degollé: él ha resucitado de los muertos.
Porque el mismo Herodes había enviado, y prendido á Juan, y le había aprisionado en la cárcel á causa de Herodías, mujer de Felipe su hermano; pues la había tomado por mujer.
Porque Juan decía á Herodes: No te es lícito tener la mujer de tu hermano.
Mas Herodías le acechaba, y deseaba matarle, y no podía:
Porque Herodes temía á Juan, sabiendo que era varón justo y santo, y le tenía respeto: y oyéndole, hacía muchas cosas; y le oía de buena gana.
Y venido un día oportuno, en que Herodes, en la fiesta de su nacimiento, daba una cena á sus príncipes y tribunos, y á los principales de Galilea;
Y entrando la hija de Herodías, y danzando, y agradando á Herodes y á los que estaban con él á la mesa, el rey dijo á la muchacha: Pídeme lo que quisieres, que yo te lo daré.
Y le juró: Todo lo que me pidieres te daré, hasta la mitad de mi reino.
Y saliendo ella, dijo á su madre: ¿Qué pediré? Y ella dijo: La cabeza de Juan Bautista.
Entonces ella entró prestamente al rey, y pidió, diciendo: Quiero que ahora mismo me des en un plato la cabeza de Juan Bautista.
Y el rey se entristeció mucho; mas á causa del juramento, y de los que estaban con él á la mesa, no quiso desecharla.
Y luego el rey, enviando uno de la guardia, mandó que fuese traída su cabeza;
El cual fué, y le degolló en la cárcel, y trajo su cabeza en un plato, y la dió á la muchacha, y la muchacha la dió á su madre.
Y oyéndo lo sus discípulos, vinieron y tomaron su cuerpo, y le pusieron en un sepulcro.
Y los apóstoles se juntaron con Jesús, y le contaron todo lo que habían hecho, y lo que habían enseñado.
Y él les dijo: Venid vosotros aparte al lugar desierto, y reposad un poco. Porque eran muchos los que iban y venían, que ni aun tenían lugar de comer.
Y se fueron en un barco al lugar desierto aparte.
Y los vieron ir muchos, y le conocieron; y concurrieron allá muchos á pie de las ciudades, y llegaron antes que ellos, y se juntaron á él.
Y saliendo Jesús vió grande multitud, y tuvo compasión de ellos, porque eran como ovejas que no tenían pastor; y les comenzó á enseñar muchas cosas.
Y como ya fuese el día muy entrado, sus discípulos llegaron á él, diciendo: El lugar es desierto, y el día ya muy entrado;
Envíalos para que vayan á los cortijos y aldeas de alrededor, y compren para sí pan; porque no tienen qué comer.
Y respondiendo él, les dijo: Dadles de comer vosotros. Y le dijeron: ¿Que vayamos y compremos pan por doscientos denarios, y les demos de comer?
Y él les dice: ¿Cuántos panes tenéis? Id, y vedlo. Y sabiéndolo, dijeron: Cinco, y dos peces.
Y les mandó que hiciesen recostar á todos por partidas sobre la hierba verde.
Y se recostaron por partidas, de ciento en ciento, y de cincuenta en cincuenta.
Y tomados los cinco panes y los dos peces, mirando al cielo, bendijo, y partió los panes, y dió á sus discípulos para que los pusiesen delante: y repartió á todos los dos peces.
Y comieron todos, y se hartaron.
Y alzaron de los pedazos doce cofines llenos, y de los peces.
Y los que comieron eran cinco mil hombres.
Y luego dió priesa á sus discípulos á subir en el barco, é ir delante de él á Bethsaida de la otra parte, entre tanto que él despedía la multitud.
Y después que los hubo despedido, se fué al monte á orar.
Y como fué la tarde, el barco estaba en medio de la mar, y él solo en tierra.
Y los vió fatigados bogando, porque el viento les era contrario: y cerca de la cuarta vigilia de la noche, vino á ellos andando sobre la mar, y quería precederlos.
Y viéndole ellos, que andaba sobre la mar, pensaron que era fantasma, y dieron voces;
Porque todos le veían, y se turbaron. Mas luego habló con ellos, y les dijo: Alentaos; yo soy, no temáis.
Y subió á ellos en el barco, y calmó el viento: y ellos en gran manera estaban fuera de sí, y se maravillaban:
Porque aun no habían considerado lo de los panes, por cuanto estaban ofuscados sus corazones.
Y cuando estuvieron de la otra parte, vinieron á tierra de Genezaret, y tomaron puerto.
Y saliendo ellos del barco, luego le conocieron.
Y recorriendo toda la tierra de alrededor, comenzaron á traer de todas partes enfermos en lechos, á donde oían que estaba.
Y donde quiera que entraba, en aldeas, ó ciudades, ó heredades, ponían en las calles á los que estaban enfermos, y le rogaban que tocasen siquiera el borde de su vestido; y todos los que le tocaban quedaban sanos.
En aquellos días, como hubo gran gentío, y no tenían qué comer, Jesús llamó á sus discípulos, y les dijo:
Tengo compasión de la multitud, porque ya hace tres días que están conmigo, y no tienen qué comer:
Y si los enviare en ayunas á sus casas, desmayarán en el camino; porque algunos de ellos han venido de lejos.
Y sus discípulos le respondieron: ¿De dónde podrá alguien hartar á estos de pan aquí en el desierto?
Y les preguntó: ¿Cuántos panes tenéis? Y ellos dijeron: Siete.
Entonces mandó á la multitud que se recostase en tierra; y tomando los siete panes, habiendo dado gracias, partió, y dió á sus discípulos que los pusiesen delante: y los pusieron delante á la multitud.
Tenían también unos pocos pececillos: y los bendijo, y mandó que también los pusiesen delante.
Y comieron, y se hartaron: y levantaron de los pedazos que habían sobrado, siete espuertas.
Y eran los que comieron, como cuatro mil: y los despidió.
Y luego entrando en el barco con sus discípulos, vino á las partes de Dalmanutha.
Y vinieron los Fariseos, y comenzaron á altercar con él, pidiéndole señal del cielo, tentándole.
Y gimiendo en su espíritu, dice: ¿Por qué pide señal esta generación? De cierto os digo que no se dará señal á esta generación.
Y dejándolos, volvió á entrar en el barco, y se fué de la otra parte.
Y se habían olvidado de tomar pan, y no tenían sino un pan consigo en el barco.
Y les mandó, diciendo: Mirad, guardaos de la levadura de los Fariseos, y de la levadura de Herodes.
Y altercaban los unos con los otros diciendo: Pan no tenemos.
Y como Jesús lo entendió, les dice: ¿Qué altercáis, porque no tenéis pan? ¿no consideráis ni entendéis? ¿aun tenéis endurecido vuestro corazón?
¿Teniendo ojos no veis, y teniendo oídos no oís? ¿y no os acordáis?
Cuando partí los cinco panes entre cinco mil, ¿cuántas espuertas llenas de los pedazos alzasteis? Y ellos dijeron: Doce.
Y cuando los siete panes entre cuatro mil, ¿cuántas espuertas llenas de los pedazos alzasteis? Y ellos dijeron: Siete.
Y les dijo: ¿Cómo aun no entendéis?
Y vino á Bethsaida; y le traen un ciego, y le ruegan que le tocase.
Entonces, tomando la mano del ciego, le sacó fuera de la aldea; y escupiendo en sus ojos, y poniéndole las manos encima, le preguntó si veía algo.
Y él mirando, dijo: Veo los hombres, pues veo que andan como árboles.
Luego le puso otra vez las manos sobre sus ojos, y le hizo que mirase; y fué restablecido, y vió de lejos y claramente á todos.
Y envióle á su casa, diciendo: No entres en la aldea, ni lo digas á nadie en la aldea.
Y salió Jesús y sus discípulos por las aldeas de Cesarea de Filipo. Y en el camino preguntó á sus discípulos, diciéndoles: ¿Quién dicen los hombres que soy yo?
Y ellos respondieron: Juan Bautista; y otros, Elías; y otros, Alguno de los profetas.
Entonces él les dice: Y vosotros, ¿quién decís que soy yo? Y respondiendo Pedro, le dice: Tú eres el Cristo.
Y les apercibió que no hablasen de él á ninguno.
Y comenzó á enseñarles, que convenía que el Hijo del hombre padeciese mucho, y ser reprobado de los ancianos, y de los príncipes de los sacerdotes, y de los escribas, y ser muerto, y resucitar después de tres días.
Y claramente decía esta palabra. Entonces Pedro le tomó, y le comenzó á reprender.
Y él, volviéndose y mirando á sus discípulos, riñó á Pedro, diciendo: Apártate de mí, Satanás; porque no sabes las cosas que son de Dios, sino las que son de los hombres.
Y llamando á la gente con sus discípulos, les dijo: Cualquiera que quisiere venir en pos de mí, niéguese á sí mismo, y tome su cruz, y sígame.
Porque el que quisiere salvar su vida, la perderá; y el que perdiere su vida por causa de mí y del evangelio, la salvará.
Porque ¿qué aprovechará al hombre, si granjeare todo el mundo, y pierde su alma?
¿O qué recompensa dará el hombre por su alma?
Porque el que se avergonzare de mí y de mis palabras en esta generación adulterina y pecadora, el Hijo del hombre se avergonzará también de él, cuando vendrá en la gloria de su Padre con los santos ángeles.
También les dijo: De cierto os digo que hay algunos de los que están aquí, que no gustarán la muerte hasta que hayan visto el reino de Dios que viene con potencia.
Y seis días después tomó Jesús á Pedro, y á Jacobo, y á Juan, y los sacó aparte solos á un monte alto; y fué transfigurado delante de ellos.
Y sus vestidos se volvieron resplandecientes, muy blancos, como la nieve; tanto que ningún lavador en la tierra los puede hacer tan blancos.
Y les apareció Elías con Moisés, que hablaban con Jesús.
Entonces respondiendo Pedro, dice á Jesús: Maestro, bien será que nos quedemos aquí, y hagamos tres pabellones: para ti uno, y para Moisés otro, y para Elías otro;
Porque no sabía lo que hablaba; que estaban espantados.
Y vino una nube que les hizo sombra, y una voz de la nube, que decía: Este es mi Hijo amado: á él oid.
Y luego, como miraron, no vieron más á nadie consigo, sino á Jesús solo.
Y descendiendo ellos del monte, les mandó que á nadie dijesen lo que habían visto, sino cuando el Hijo del hombre hubiese resucitado de los muertos.
Y retuvieron la palabra en sí, altercando qué sería aquéllo: Resucitar de los muertos.
Y le preguntaron, diciendo: ¿Qué es lo que los escribas dicen, que es necesario que Elías venga antes?
Y respondiendo él, les dijo: Elías á la verdad, viniendo antes, restituirá todas las cosas: y como está escrito del Hijo del hombre, que padezca mucho y sea tenido en nada.
Empero os digo que Elías ya vino, y le hicieron todo lo que quisieron, como está escrito de él.
Y como vino á los discípulos, vió grande compañía alrededor de ellos, y escribas que disputaban con ellos.
Y luego toda la gente, viéndole, se espantó, y corriendo á él, le saludaron.
Y preguntóles: ¿Qué disputáis con ellos?
Y respondiendo uno de la compañía, dijo: Maestro, traje á ti mi hijo, que tiene un espíritu mudo,
El cual, donde quiera que le toma, le despedaza; y echa espumarajos, y cruje los dientes, y se va secando: y dije á tus discípulos que le echasen fuera, y no pudieron.
Y respondiendo él, les dijo: ¡Oh generación infiel! ¿hasta cuándo estaré con vosotros? ¿hasta cuándo os tengo de sufrir? Traédmele.
Y se le trajeron: y como le vió, luego el espíritu le desgarraba; y cayendo en tierra, se revolcaba, echando espumarajos.
Y Jesús preguntó á su padre: ¿Cuánto tiempo há que le aconteció esto? Y él dijo: Desde niño:
Y muchas veces le echa en el fuego y en aguas, para matarle; mas, si puedes algo, ayúdanos, teniendo misericordia de nosotros.
Y Jesús le dijo: Si puedes creer, al que cree todo es posible.
Y luego el padre del muchacho dijo clamando: Creo, ayuda mi incredulidad.
Y como Jesús vió que la multitud se agolpaba, reprendió al espíritu inmundo, diciéndole: Espíritu mudo y sordo, yo te mando, sal de él, y no entres más en él.
Entonces el espíritu clamando y desgarrándole mucho, salió; y él quedó como muerto, de modo que muchos decían: Está muerto.
Mas Jesús tomándole de la mano, enderezóle; y se levantó.
Y como él entró en casa, sus discípulos le preguntaron aparte: ¿Por qué nosotros no pudimos echarle fuera?
Y les dijo: Este género con nada puede salir, sino con oración y ayuno.
Y habiendo salido de allí, caminaron por Galilea; y no quería que nadie lo supiese.
Porque enseñaba á sus discípulos, y les decía: El Hijo del hombre será entregado en manos de hombres, y le matarán; mas muerto él, resucitará al tercer día.
Pero ellos no entendían esta palabra, y tenían miedo de preguntarle.
Y llegó á Capernaum; y así que estuvo en casa, les preguntó: ¿Qué disputabais entre vosotros en el camino?
Mas ellos callaron; porque los unos con los otros habían disputado en el camino quién había de ser el mayor.
Entonces sentándose, llamó á los doce, y les dice: Si alguno quiere ser el primero, será el postrero de todos, y el servidor de todos.
Y tomando un niño, púsolo en medio de ellos; y tomándole en sus brazos, les dice:
El que recibiere en mi nombre uno de los tales niños, á mí recibe; y el que á mí recibe, no recibe á mí, mas al que me envió.
Y respondióle Juan, diciendo: Maestro, hemos visto á uno que en tu nombre echaba fuera los demonios, el cual no nos sigue; y se lo prohibimos, porque no nos sigue.
Y Jesús dijo: No se lo prohibáis; porque ninguno hay que haga milagro en mi nombre que luego pueda decir mal de mí.
Porque el que no es contra nosotros, por nosotros es.
Y cualquiera que os diere un vaso de agua en mi nombre, porque sois de Cristo, de cierto os digo que no perderá su recompensa.
Y cualquiera que escandalizare á uno de estos pequeñitos que creen en mí, mejor le fuera si se le atase una piedra de molino al cuello, y fuera echado en la mar.
Y si tu mano te escandalizare, córtala: mejor te es entrar á la vida manco, que teniendo dos manos ir á la Gehenna, al fuego que no puede ser apagado;
Donde su gusano no muere, y el fuego nunca se apaga.
Y si tu pie te fuere ocasión de caer, córtalo: mejor te es entrar á la vida cojo, que teniendo dos pies ser echado en la Gehenna, al fuego que no puede ser apagado;
Donde el gusano de ellos no muere, y el fuego nunca se apaga.
Y si tu ojo te fuere ocasión de caer, sácalo: mejor te es entrar al reino de Dios con un ojo, que teniendo dos ojos ser echado á la Gehenna;
Donde el gusano de ellos no muere, y el fuego nunca se apaga.
Porque todos serán salados con fuego, y todo sacrificio será salado con sal.
Buena es la sal; mas si la sal fuere desabrida, ¿con qué la adobaréis? Tened en vosotros mismos sal; y tened paz los unos con los otros.
Y partiéndose de allí, vino á los términos de Judea y tras el Jordán: y volvió el pueblo á juntarse á él; y de nuevo les enseñaba como solía.
Y llegándose los Fariseos, le preguntaron, para tentarle, si era lícito al marido repudiar á su mujer.
Mas él respondiendo, les dijo: ¿Qué os mandó Moisés?
Y ellos dijeron: Moisés permitió escribir carta de divorcio, y repudiar.
Y respondiendo Jesús, les dijo: Por la dureza de vuestro corazón os escribió este mandamiento;
Pero al principio de la creación, varón y hembra los hizo Dios.
Por esto dejará el hombre á su padre y á su madre, y se juntará á su mujer.
Y los que eran dos, serán hechos una carne: así que no son más dos, sino una carne.
Pues lo que Dios juntó, no lo aparte el hombre.
Y en casa volvieron los discípulos á preguntarle de lo mismo.
Y les dice: Cualquiera que repudiare á su mujer, y se casare con otra, comete adulterio contra ella:
Y si la mujer repudiare á su marido y se casare con otro, comete adulterio.
Y le presentaban niños para que los tocase; y los discípulos reñían á los que los presentaban.
Y viéndolo Jesús, se enojó, y les dijo: Dejad los niños venir, y no se lo estorbéis; porque de los tales es el reino de Dios.
De cierto os digo, que el que no recibiere el reino de Dios como un niño, no entrará en él.
Y tomándolos en los brazos, poniendo las manos sobre ellos, los bendecía.
Y saliendo él para ir su camino, vino uno corriendo, é hincando la rodilla delante de él, le preguntó: Maestro bueno, ¿qué haré para poseer la vida eterna?
Y Jesús le dijo: ¿Por qué me dices bueno? Ninguno hay bueno, sino sólo uno, Dios.
Los mandamientos sabes: No adulteres: No mates: No hurtes: No digas falso testimonio: No defraudes: Honra á tu padre y á tu madre.
El entonces respondiendo, le dijo: Maestro, todo esto he guardado desde mi mocedad.
Entonces Jesús mirándole, amóle, y díjole: Una cosa te falta: ve, vende todo lo que tienes, y da á los pobres, y tendrás tesoro en el cielo; y ven, sígueme, tomando tu cruz.
Mas él, entristecido por esta palabra, se fué triste, porque tenía muchas posesiones.
Entonces Jesús, mirando alrededor, dice á sus discípulos: ¡Cuán difícilmente entrarán en el reino de Dios los que tienen riquezas!
Y los discípulos se espantaron de sus palabras; mas Jesús respondiendo, les volvió á decir: ¡Hijos, cuán difícil es entrar en el reino de Dios, los que confían en las riquezas!
Más fácil es pasar un camello por el ojo de una aguja, que el rico entrar en el reino de Dios.
Y ellos se espantaban más, diciendo dentro de sí: ¿Y quién podrá salvarse?
Entonces Jesús mirándolos, dice: Para los hombres es imposible; mas para Dios, no; porque todas las cosas son posibles para Dios.
Entonces Pedro comenzó á decirle: He aquí, nosotros hemos dejado todas las cosas, y te hemos seguido.
Y respondiendo Jesús, dijo: De cierto os digo, que no hay ninguno que haya dejado casa, ó hermanos, ó hermanas, ó padre, ó madre, ó mujer, ó hijos, ó heredades, por causa de mí y del evangelio,
Que no reciba cien tantos ahora en este tiempo, casas, y hermanos, y hermanas, y madres, é hijos, y heredades, con persecuciones; y en el siglo venidero la vida eterna.
Empero muchos primeros serán postreros, y postreros primeros.
Y estaban en el camino subiendo á Jerusalem; y Jesús iba delante de ellos, y se espantaban, y le seguían con miedo: entonces volviendo á tomar á los doce aparte, les comenzó á decir las cosas que le habían de acontecer:
He aquí subimos á Jerusalem, y el Hijo del hombre será entregado á los príncipes de los sacerdotes, y á los escribas, y le condenarán á muerte, y le entregarán á los Gentiles:
Y le escarnecerán, y le azotarán, y escupirán en él, y le matarán; mas al tercer día resucitará.
Entonces Jacobo y Juan, hijos de Zebedeo, se llegaron á él, diciendo: Maestro, querríamos que nos hagas lo que pidiéremos.
Y él les dijo: ¿Qué queréis que os haga?
Y ellos le dijeron: Danos que en tu gloria nos sentemos el uno á tu diestra, y el otro á tu siniestra.
Entonces Jesús les dijo: No sabéis lo que pedís. ¿Podéis beber del vaso que yo bebo, ó ser bautizados del bautismo de que yo soy bautizado?
Y ellos dijeron: Podemos. Y Jesús les dijo: A la verdad, del vaso que yo bebo, beberéis; y del bautismo de que yo soy bautizado, seréis bautizados.
Mas que os sentéis á mi diestra y á mi siniestra, no es mío darlo, sino á quienes está aparejado.
Y como lo oyeron los diez, comenzaron á enojarse de Jacobo y de Juan.
Mas Jesús, llamándolos, les dice: Sabéis que los que se ven ser príncipes entre las gentes, se enseñorean de ellas, y los que entre ellas son grandes, tienen sobre ellas potestad.
Mas no será así entre vosotros: antes cualquiera que quisiere hacerse grande entre vosotros, será vuestro servidor;
Y cualquiera de vosotros que quisiere hacerse el primero, será siervo de todos.
Porque el Hijo del hombre tampoco vino para ser servido, mas para servir, y dar su vida en rescate por muchos.
Entonces vienen á Jericó: y saliendo él de Jericó y sus discípulos y una gran compañía, Bartimeo el ciego, hijo de Timeo, estaba sentado junto al camino mendigando.
Y oyendo que era Jesús el Nazareno, comenzó á dar voces y decir: Jesús, Hijo de David, ten misericordia de mí.
Y muchos le reñían, que callase: mas él daba mayores voces: Hijo de David, ten misericordia de mí.
Entonces Jesús parándose, mandó llamarle: y llaman al ciego, diciéndole: Ten confianza: levántate, te llama.
El entonces, echando su capa, se levantó, y vino á Jesús.
Y respondiendo Jesús, le dice: ¿Qué quieres que te haga? Y el ciego le dice: Maestro, que cobre la vista.
Y Jesús le dijo: Ve, tu fe te ha salvado. Y luego cobró la vista, y seguía á Jesús en el camino.
Y como fueron cerca de Jerusalem, de Bethphagé, y de Bethania, al monte de las Olivas, envía dos de sus discípulos,
Y les dice: Id al lugar que está delante de vosotros, y luego entrados en él, hallaréis un pollino atado, sobre el cual ningún hombre ha subido; desatadlo y traedlo.
Y si alguien os dijere: ¿Por qué hacéis eso? decid que el Señor lo ha menester: y luego lo enviará acá.
Y fueron, y hallaron el pollino atado á la puerta fuera, entre dos caminos; y le desataron.
Y unos de los que estaban allí, les dijeron: ¿Qué hacéis desatando el pollino?
Ellos entonces les dijeron como Jesús había mandado: y los dejaron.
Y trajeron el pollino á Jesús, y echaron sobre él sus vestidos, y se sentó sobre él.
Y muchos tendían sus vestidos por el camino, y otros cortaban hojas de los árboles, y las tendían por el camino.
Y los que iban delante, y los que iban detrás, daban voces diciendo: ¡Hosanna! Bendito el que viene en el nombre del Señor.
Bendito el reino de nuestro padre David que viene: ¡Hosanna en las alturas!
Y entró Jesús en Jerusalem, y en el templo: y habiendo mirado alrededor todas las cosas, y siendo ya tarde, salióse á Bethania con los doce.
Y el día siguiente, como salieron de Bethania, tuvo hambre.
Y viendo de lejos una higuera que tenía hojas, se acercó, si quizá hallaría en ella algo: y como vino á ella, nada halló sino hojas; porque no era tiempo de higos.
Entonces Jesús respondiendo, dijo á la higuera: Nunca más coma nadie fruto de ti para siempre. Y lo oyeron sus discípulos.
Vienen, pues, á Jerusalem; y entrando Jesús en el templo, comenzó á echar fuera á los que vendían y compraban en el templo; y trastornó las mesas de los cambistas, y las sillas de los que vendían palomas;
Y no consentía que alguien llevase vaso por el templo.
Y les enseñaba diciendo: ¿No está escrito que mi casa, casa de oración será llamada por todas las gentes? Mas vosotros la habéis hecho cueva de ladrones.
Y lo oyeron los escribas y los príncipes de los sacerdotes, y procuraban cómo le matarían; porque le tenían miedo, por cuanto todo el pueblo estaba maravillado de su doctrina.
Mas como fué tarde, Jesús salió de la ciudad.
Y pasando por la mañana, vieron que la higuera se había secado desde las raíces.
Entonces Pedro acordándose, le dice: Maestro, he aquí la higuera que maldijiste, se ha secado.
Y respondiendo Jesús, les dice: Tened fe en Dios.
Porque de cierto os digo que cualquiera que dijere á este monte: Quítate, y échate en la mar, y no dudare en su corazón, mas creyere que será hecho lo que dice, lo que dijere le será hecho.
Por tanto, os digo que todo lo que orando pidiereis, creed que lo recibiréis, y os vendrá.
Y cuando estuviereis orando, perdonad, si tenéis algo contra alguno, para que vuestro Padre que está en los cielos os perdone también á vosotros vuestras ofensas.
Porque si vosotros no perdonareis, tampoco vuestro Padre que está en los cielos os perdonará vuestras ofensas.
Y volvieron á Jerusalem; y andando él por el templo, vienen á él los príncipes de los sacerdotes, y los escribas, y los ancianos;
Y le dicen: ¿Con qué facultad haces estas cosas? ¿y quién te ha dado esta facultad para hacer estas cosas?
Y Jesús respondiendo entonces, les dice: Os preguntaré también yo una palabra; y respondedme, y os diré con qué facultad hago estas cosas:
El bautismo de Juan, ¿era del cielo, ó de los hombres? Respondedme.
Entonces ellos pensaron dentro de sí, diciendo: Si dijéremos, del cielo, dirá: ¿Por qué, pues, no le creísteis?
Y si dijéremos, de los hombres, tememos al pueblo: porque todos juzgaban de Juan, que verdaderamente era profeta.
Y respondiendo, dicen á Jesús: No sabemos. Entonces respondiendo Jesús, les dice: Tampoco yo os diré con qué facultad hago estas cosas.
Y saliendo del templo, le dice uno de sus discípulos: Maestro, mira qué piedras, y qué edificios.
Y Jesús respondiendo, le dijo: ¿Ves estos grandes edificios? no quedará piedra sobre piedra que no sea derribada.
Y sentándose en el monte de las Olivas delante del templo, le preguntaron aparte Pedro y Jacobo y Juan y Andrés:
Dinos, ¿cuándo serán estas cosas? ¿y qué señal habrá cuando todas estas cosas han de cumplirse?
Y Jesús respondiéndoles, comenzó á decir: Mirad, que nadie os engañe;
Porque vendrán muchos en mi nombre, diciendo: Yo soy el Cristo; y engañarán á muchos.
Mas cuando oyereis de guerras y de rumores de guerras no os turbéis, porque conviene hacerse así; mas aun no será el fin.
Porque se levantará nación contra nación, y reino contra reino; y habrá terremotos en muchos lugares, y habrá hambres y alborotos; principios de dolores serán estos.
Mas vosotros mirad por vosotros: porque os entregarán en los concilios, y en sinagogas seréis azotados: y delante de presidentes y de reyes seréis llamados por causa de mí, en testimonio á ellos.
Y á todas las gentes conviene que el evangelio sea predicado antes.
Y cuando os trajeren para entregaros, no premeditéis qué habéis de decir, ni lo penséis: mas lo que os fuere dado en aquella hora, eso hablad; porque no sois vosotros los que habláis, sino el Espíritu Santo.
Y entregará á la muerte el hermano al hermano, y el padre al hijo: y se levantarán los hijos contra los padres, y los matarán.
Y seréis aborrecidos de todos por mi nombre: mas el que perseverare hasta el fin, éste será salvo.
Empero cuando viereis la abominación de asolamiento, que fué dicha por el profeta Daniel, que estará donde no debe (el que lee, entienda), entonces los que estén en Judea huyan á los montes;
Y el que esté sobre el terrado, no descienda á la casa, ni entre para tomar algo de su casa;
Y el que estuviere en el campo, no vuelva atrás á tomar su capa.
Mas ¡ay de las preñadas, y de las que criaren en aquellos días!
Orad pues, que no acontezca vuestra huída en invierno.
Porque aquellos días serán de aflicción, cual nunca fué desde el principio de la creación que crió Dios, hasta este tiempo, ni será.
Y si el Señor no hubiese abreviado aquellos días, ninguna carne se salvaría; mas por causa de los escogidos que él escogió, abrevió aquellos días.
Y entonces si alguno os dijere: He aquí, aquí está el Cristo; ó, He aquí, allí está, no le creáis.
Porque se levantarán falsos Cristos y falsos profetas, y darán señales y prodigios, para engañar, si se pudiese hacer, aun á los escogidos.
Mas vosotros mirad; os lo he dicho antes todo.
Empero en aquellos días, después de aquella aflicción, el sol se obscurecerá, y la luna no dará su resplandor;
Y las estrellas caerán del cielo, y las virtudes que están en los cielos serán conmovidas;
Y entonces verán al Hijo del hombre, que vendrá en las nubes con mucha potestad y gloria.
Y entonces enviará sus ángeles, y juntará sus escogidos de los cuatro vientos, desde el cabo de la tierra hasta el cabo del cielo.
De la higuera aprended la semejanza: Cuando su rama ya se enternece, y brota hojas, conocéis que el verano está cerca:
Así también vosotros, cuando viereis hacerse estas cosas, conoced que está cerca, á las puertas.
De cierto os digo que no pasará esta generación, que todas estas cosas no sean hechas.
El cielo y la tierra pasarán, mas mis palabras no pasarán.
Empero de aquel día y de la hora, nadie sabe; ni aun los ángeles que están en el cielo, ni el Hijo, sino el Padre.
Mirad, velad y orad: porque no sabéis cuándo será el tiempo.
Como el hombre que partiéndose lejos, dejó su casa, y dió facultad á sus siervos, y á cada uno su obra, y al portero mandó que velase:
Velad pues, porque no sabéis cuándo el señor de la casa vendrá; si á la tarde, ó á la media noche, ó al canto del gallo, ó á la mañana;
Porque cuando viniere de repente, no os halle durmiendo.
Y las cosas que á vosotros digo, á todos las digo: Velad.
Y dos días después era la Pascua y los días de los panes sin levadura: y procuraban los príncipes de los sacerdotes y los escribas cómo le prenderían por engaño, y le matarían.
Y decían: No en el día de la fiesta, porque no se haga alboroto del pueblo.
Y estando él en Bethania en casa de Simón el leproso, y sentado á la mesa, vino una mujer teniendo un alabastro de ungüento de nardo espique de mucho precio; y quebrando el alabastro, derramóselo sobre su cabeza.
Y hubo algunos que se enojaron dentro de sí, y dijeron: ¿Para qué se ha hecho este desperdicio de ungüento?
Porque podía esto ser vendido por más de trescientos denarios, y darse á los pobres. Y murmuraban contra ella.
Mas Jesús dijo: Dejadla; ¿por qué la fatigáis? buena obra me ha hecho;
Que siempre tendréis los pobres con vosotros, y cuando quisiereis les podréis hacer bien; mas á mí no siempre me tendréis.
Esta ha hecho lo que podía; porque se ha anticipado á ungir mi cuerpo para la sepultura.
De cierto os digo que donde quiera que fuere predicado este evangelio en todo el mundo, también esto que ha hecho ésta, será dicho para memoria de ella.
Entonces Judas Iscariote, uno de los doce, vino á los príncipes de los sacerdotes, para entregársele.
Y ellos oyéndolo se holgaron, y prometieron que le darían dineros. Y buscaba oportunidad cómo le entregaría.
Y el primer día de los panes sin levadura, cuando sacrificaban la pascua, sus discípulos le dicen: ¿Dónde quieres que vayamos á disponer para que comas la pascua?
Y envía dos de sus discípulos, y les dice: Id á la ciudad, y os encontrará un hombre que lleva un cántaro de agua; seguidle;
Y donde entrare, decid al señor de la casa: El Maestro dice: ¿Dónde está el aposento donde he de comer la pascua con mis discípulos?
Y él os mostrará un gran cenáculo ya preparado: aderezad para nosotros allí.
Y fueron sus discípulos, y vinieron á la ciudad, y hallaron como les había dicho; y aderezaron la pascua.
Y llegada la tarde, fué con los doce.
Y como se sentaron á la mesa y comiesen, dice Jesús: De cierto os digo que uno de vosotros, que come conmigo, me ha de entregar.
Entonces ellos comenzaron á entristecerse, y á decirle cada uno por sí: ¿Seré yo? Y el otro: ¿Seré yo?
Y él respondiendo les dijo: Es uno de los doce que moja conmigo en el plato.
A la verdad el Hijo del hombre va, como está de él escrito; mas ¡ay de aquel hombre por quien el Hijo del hombre es entregado! bueno le fuera á aquel hombre si nunca hubiera nacido.
Y estando ellos comiendo, tomó Jesús pan, y bendiciendo, partió y les dió, y dijo: Tomad, esto es mi cuerpo.
Y tomando el vaso, habiendo hecho gracias, les dió: y bebieron de él todos.
Y les dice: Esto es mi sangre del nuevo pacto, que por muchos es derramada.
De cierto os digo que no beberé más del fruto de la vid, hasta aquel día cuando lo beberé nuevo en el reino de Dios.
Y como hubieron cantado el himno, se salieron al monte de las Olivas.
Jesús entonces les dice: Todos seréis escandalizados en mí esta noche; porque escrito está: Heriré al pastor, y serán derramadas las ovejas.
Mas después que haya resucitado, iré delante de vosotros á Galilea.
Entonces Pedro le dijo: Aunque todos sean escandalizados, mas no yo.
Y le dice Jesús: De cierto te digo que tú, hoy, en esta noche, antes que el gallo haya cantado dos veces, me negarás tres veces.
Mas él con mayor porfía decía: Si me fuere menester morir contigo, no te negaré. También todos decían lo mismo.
Y vienen al lugar que se llama Gethsemaní, y dice á sus discípulos: Sentaos aquí, entre tanto que yo oro.
Y toma consigo á Pedro y á Jacobo y á Juan, y comenzó á atemorizarse, y á angustiarse.
Y les dice: Está muy triste mi alma, hasta la muerte: esperad aquí y velad.
Y yéndose un poco adelante, se postró en tierra, y oró que si fuese posible, pasase de él aquella hora.
Y decía: Abba, Padre, todas las cosas son á ti posibles; traspasa de mí este vaso; empero no lo que yo quiero, sino lo que tú.
Y vino y los halló durmiendo; y dice á Pedro: ¿Simón, duermes? ¿No has podido velar una hora?
Velad y orad, para que no entréis en tentación: el espíritu á la verdad es presto, mas la carne enferma.
Y volviéndose á ir, oró, y dijo las mismas palabras.
Y vuelto, los halló otra vez durmiendo, porque los ojos de ellos estaban cargados; y no sabían qué responderle.
Y vino la tercera vez, y les dice: Dormid ya y descansad: basta, la hora es venida; he aquí, el Hijo del hombre es entregado en manos de los pecadores.
Levantaos, vamos: he aquí, el que me entrega está cerca.
Y luego, aun hablando él, vino Judas, que era uno de los doce, y con él una compañía con espadas y palos, de parte de los príncipes de los sacerdotes, y de los escribas y de los ancianos.
Y el que le entregaba les había dado señal común, diciendo: Al que yo besare, aquél es: prendedle, y llevadle con seguridad.
Y como vino, se acercó luego á él, y le dice: Maestro, Maestro. Y le besó.
Entonces ellos echaron en él sus manos, y le prendieron.
Y uno de los que estaban allí, sacando la espada, hirió al siervo del sumo sacerdote, y le cortó la oreja.
Y respondiendo Jesús, les dijo: ¿Como á ladrón habéis salido con espadas y con palos á tomarme?
Cada día estaba con vosotros enseñando en el templo, y no me tomasteis; pero es así, para que se cumplan las Escrituras.
Entonces dejándole todos sus discípulos, huyeron.
Empero un mancebillo le seguía cubierto de una sábana sobre el cuerpo desnudo; y los mancebos le prendieron:
Mas él, dejando la sábana, se huyó de ellos desnudo.
Y trajeron á Jesús al sumo sacerdote; y se juntaron á él todos los príncipes de los sacerdotes y los ancianos y los escribas.
Empero Pedro le siguió de lejos hasta dentro del patio del sumo sacerdote; y estaba sentado con los servidores, y calentándose al fuego.
Y los príncipes de los sacerdotes y todo el concilio buscaban testimonio contra Jesús, para entregarle á la muerte; mas no lo hallaban.
Porque muchos decían falso testimonio contra él; mas sus testimonios no concertaban.
Entonces levantándose unos, dieron falso testimonio contra él, diciendo:
Nosotros le hemos oído decir: Yo derribaré este templo que es hecho de mano, y en tres días edificaré otro echo sin mano.
Mas ni aun así se concertaba el testimonio de ellos.
Entonces el sumo sacerdote, levantándose en medio, preguntó á Jesús, diciendo: ¿No respondes algo? ¿Qué atestiguan éstos contra ti?
Mas él callaba, y nada respondía. El sumo sacerdote le volvió á preguntar, y le dice: ¿Eres tú el Cristo, el Hijo del Bendito?
Y Jesús le dijo: Yo soy; y veréis al Hijo del hombre sentado á la diestra de la potencia de Dios, y viniendo en las nubes del cielo.
Entonces el sumo sacerdote, rasgando sus vestidos, dijo: ¿Qué más tenemos necesidad de testigos?
Oído habéis la blasfemia: ¿qué os parece? Y ellos todos le condenaron ser culpado de muerte.
Y algunos comenzaron á escupir en él, y cubrir su rostro, y á darle bofetadas, y decirle: Profetiza. Y los servidores le herían de bofetadas.
Y estando Pedro abajo en el atrio, vino una de las criadas del sumo sacerdote;
Y como vió á Pedro que se calentaba, mirándole, dice: Y tú con Jesús el Nazareno estabas.
Mas él negó, diciendo: No conozco, ni sé lo que dices. Y se salió fuera á la entrada; y cantó el gallo.
Y la criada viéndole otra vez, comenzó á decir á los que estaban allí: Este es de ellos.
Mas él negó otra vez. Y poco después, los que estaban allí dijeron otra vez á Pedro: Verdaderamente tú eres de ellos; porque eres Galileo, y tu habla es semejante.
Y él comenzó á maldecir y á jurar: No conozco á este hombre de quien habláis.
Y el gallo cantó la segunda vez: y Pedro se acordó de las palabras que Jesús le había dicho: Antes que el gallo cante dos veces, me negarás tres veces. Y pensando en esto, lloraba.
Y luego por la mañana, habiendo tenido consejo los príncipes de los sacerdotes con los ancianos, y con los escribas, y con todo el concilio, llevaron á Jesús atado, y le entregaron á Pilato.
Y Pilato le preguntó: ¿Eres tú el Rey de los Judíos? Y respondiendo él, le dijo: Tú lo dices.
Y los príncipes de los sacerdotes le acusaban mucho.
Y le preguntó otra vez Pilato, diciendo: ¿No respondes algo? Mira de cuántas cosas te acusan.
Mas Jesús ni aun con eso respondió; de modo que Pilato se maravillaba.
Empero en el día de la fiesta les soltaba un preso, cualquiera que pidiesen.
Y había uno, que se llamaba Barrabás, preso con sus compañeros de motín que habían hecho muerte en una revuelta.
Y viniendo la multitud, comenzó á pedir hiciese como siempre les había hecho.
Y Pilato les respondió, diciendo: ¿Queréis que os suelte al Rey de los Judíos?
Porque conocía que por envidia le habían entregado los príncipes de los sacerdotes.
Mas los príncipes de los sacerdotes incitaron á la multitud, que les soltase antes á Barrabás.
Y respondiendo Pilato, les dice otra vez: ¿Qué pues queréis que haga del que llamáis Rey de los Judíos?
Y ellos volvieron á dar voces: Crucifícale.
Mas Pilato les decía: ¿Pues qué mal ha hecho? Y ellos daban más voces: Crucifícale.
Y Pilato, queriendo satisfacer al pueblo, les soltó á Barrabás, y entregó á Jesús, después de azotarle, para que fuese crucificado.
Entonces los soldados le llevaron dentro de la sala, es á saber, al Pretorio; y convocan toda la cohorte.
Y le visten de púrpura; y poniéndole una corona tejida de espinas,
Comenzaron luego á saludarle: ¡Salve, Rey de los Judíos!
Y le herían en la cabeza con una caña, y escupían en él, y le adoraban hincadas las rodillas.
Y cuando le hubieron escarnecido, le desnudaron la púrpura, y le vistieron sus propios vestidos, y le sacaron para crucificarle.
Y cargaron á uno que pasaba, Simón Cireneo, padre de Alejandro y de Rufo, que venía del campo, para que llevase su cruz.
Y le llevan al lugar de Gólgotha, que declarado quiere decir: Lugar de la Calavera.
Y le dieron á beber vino mezclado con mirra; mas él no lo tomó.
Y cuando le hubieron crucificado, repartieron sus vestidos, echando suertes sobre ellos, qué llevaría cada uno.
Y era la hora de las tres cuando le crucificaron.
Y el título escrito de su causa era: EL REY DE LOS JUDIOS.
Y crucificaron con él dos ladrones, uno á su derecha, y el otro á su izquierda.
Y se cumplió la Escritura, que dice: Y con los inicuos fué contado.
Y los que pasaban le denostaban, meneando sus cabezas, y diciendo: ¡Ah! tú que derribas el templo de Dios, y en tres días lo edificas,
Sálvate á ti mismo, y desciende de la cruz.
Y de esta manera también los príncipes de los sacerdotes escarneciendo, decían unos á otros, con los escribas: A otros salvó, á sí mismo no se puede salvar.
El Cristo, Rey de Israel, descienda ahora de la cruz, para que veamos y creamos. También los que estaban crucificados con él le denostaban.
Y cuando vino la hora de sexta, fueron hechas tinieblas sobre toda la tierra hasta la hora de nona.
Y á la hora de nona, exclamó Jesús á gran voz, diciendo: Eloi, Eloi, ¿lama sabachthani? que declarado, quiere decir: Dios mío, Dios mío, ¿por qué me has desamparado?
Y oyéndole unos de los que estaban allí, decían: He aquí, llama á Elías.
Y corrió uno, y empapando una esponja en vinagre, y poniéndola en una caña, le dió á beber, diciendo: Dejad, veamos si vendrá Elías á quitarle.
Mas Jesús, dando una grande voz, espiró.
Entonces el velo del templo se rasgó en dos, de alto á bajo.
Y el centurión que estaba delante de él, viendo que había espirado así clamando, dijo: Verdaderamente este hombre era el Hijo de Dios.
Y también estaban algunas mujeres mirando de lejos; entre las cuales estaba María Magdalena, y María la madre de Jacobo el menor y de José, y Salomé;
Las cuales, estando aún él en Galilea, le habían seguido, y le servían; y otras muchas que juntamente con él habían subido á Jerusalem.
Y cuando fué la tarde, porque era la preparación, es decir, la víspera del sábado,
José de Arimatea, senador noble, que también esperaba el reino de Dios, vino, y osadamente entró á Pilato, y pidió el cuerpo de Jesús.
Y Pilato se maravilló que ya fuese muerto; y haciendo venir al centurión, preguntóle si era ya muerto.
Y enterado del centurión, dió el cuerpo á José:
El cual compró una sábana, y quitándole, le envolvió en la sábana: y le puso en un sepulcro que estaba cavado en una peña; y revolvió una piedra á la puerta del sepulcro.
Y María Magdalena, y María madre de José, miraban donde era puesto.
Y como pasó el sábado, María Magdalena, y María madre de Jacobo, y Salomé, compraron drogas aromáticas, para venir á ungirle.
Y muy de mañana, el primer día de la semana, vienen al sepulcro, ya salido el sol.
Y decían entre sí: ¿Quién nos revolverá la piedra de la puerta del sepulcro?
Y como miraron, ven la piedra revuelta; que era muy grande.
Y entradas en el sepulcro, vieron un mancebo sentado al lado derecho, cubierto de una larga ropa blanca; y se espantaron.
Mas él les dice: No os asustéis: buscáis á Jesús Nazareno, el que fué crucificado; resucitado há, no está aquí; he aquí el lugar en donde le pusieron.
Mas id, decid á sus discípulos y á Pedro, que él va antes que vosotros á Galilea: allí le veréis, como os dijo.
Y ellas se fueron huyendo del sepulcro; porque las había tomado temblor y espanto; ni decían nada á nadie, porque tenían miedo.
Mas como Jesús resucitó por la mañana, el primer día de la semana, apareció primeramente á María Magdalena, de la cual había echado siete demonios.
Yendo ella, lo hizo saber á los que habían estado con él, que estaban tristes y llorando.
Y ellos como oyeron que vivía, y que había sido visto de ella, no lo creyeron.
Mas después apareció en otra forma á dos de ellos que iban caminando, yendo al campo.
Y ellos fueron, y lo hicieron saber á los otros; y ni aun á ellos creyeron.
Finalmente se apareció á los once mismos, estando sentados á la mesa, y censuróles su incredulidad y dureza de corazón, que no hubiesen creído á los que le habían visto resucitado.
Y les dijo: Id por todo el mundo; predicad el evangelio á toda criatura.
El que creyere y fuere bautizado, será salvo; mas el que no creyere, será condenado.
Y estas señales seguirán á los que creyeren: En mi nombre echarán fuera demonios; hablarán nuevas lenguas;
Quitarán serpientes, y si bebieren cosa mortífera, no les dañará; sobre los enfermos pondrán sus manos, y sanarán.
Y el Señor, después que les habló, fué recibido arriba en el cielo, y sentóse á la diestra de Dios.
Y ellos, saliendo, predicaron en todas partes, obrando con ellos el Señor, y confirmando la palabra con las señales que se seguían. Amén.
Y aconteció en aquellos días que salió edicto de parte de Augusto César, que toda la tierra fuese empadronada.
Este empadronamiento primero fué hecho siendo Cirenio gobernador de la Siria.
E iban todos para ser empadronados, cada uno á su ciudad.
Y subió José de Galilea, de la ciudad de Nazaret, á Judea, á la ciudad de David, que se llama Bethlehem, por cuanto era de la casa y familia de David;
Para ser empadronado con María su mujer, desposada con él, la cual estaba en cinta.
Y aconteció que estando ellos allí, se cumplieron los días en que ella había de parir.
Y parió á su hijo primogénito, y le envolvió en pañales, y acostóle en un pesebre, porque no había lugar para ellos en el mesón.
Y había pastores en la misma tierra, que velaban y guardaban las vigilias de la noche sobre su ganado.
Y he aquí el ángel del Señor vino sobre ellos, y la claridad de Dios los cercó de resplandor; y tuvieron gran temor.
Mas el ángel les dijo: No temáis; porque he aquí os doy nuevas de gran gozo, que será para todo el pueblo:
Que os ha nacido hoy, en la ciudad de David, un Salvador, que es CRISTO el Señor.
Y esto os será por señal: hallaréis al niño envuelto en pañales, echado en un pesebre.
Y repentinamente fué con el ángel una multitud de los ejércitos celestiales, que alababan á Dios, y decían:
Gloria en las alturas á Dios, y en la tierra paz, buena voluntad para con los hombres.
Y aconteció que como los ángeles se fueron de ellos al cielo, los pastores dijeron los unos á los otros: Pasemos pues hasta Bethlehem, y veamos esto que ha sucedido, que el Señor nos ha manifestado.
Y vinieron apriesa, y hallaron á María, y á José, y al niño acostado en el pesebre.
Y viéndolo, hicieron notorio lo que les había sido dicho del niño.
Y todos los que oyeron, se maravillaron de lo que los pastores les decían.
Mas María guardaba todas estas cosas, confiriéndolas en su corazón.
Y se volvieron los pastores glorificando y alabando á Dios de todas las cosas que habían oído y visto, como les había sido dicho.
Y pasados los ocho días para circuncidar al niño, llamaron su nombre JESÚS; el cual le fué puesto por el ángel antes que él fuese concebido en el vientre.
Y como se cumplieron los días de la purificación de ella, conforme á la ley de Moisés, le trajeron á Jerusalem para presentarle al Señor,
(Como está escrito en la ley del Señor: Todo varón que abriere la matriz, será llamado santo al Señor),
Y para dar la ofrenda, conforme á lo que está dicho en la ley del Señor: un par de tórtolas, ó dos palominos.
Y he aquí, había un hombre en Jerusalem, llamado Simeón, y este hombre, justo y pío, esperaba la consolación de Israel: y el Espíritu Santo era sobre él.
Y había recibido respuesta del Espíritu Santo, que no vería la muerte antes que viese al Cristo del Señor.
Y vino por Espíritu al templo. Y cuando metieron al niño Jesús sus padres en el templo, para hacer por él conforme á la costumbre de la ley,
Entonces él le tomó en sus brazos, y bendijo á Dios, y dijo:
Ahora despides, Señor, á tu siervo, conforme á tu palabra, en paz;
Porque han visto mis ojos tu salvación,
La cual has aparejado en presencia de todos los pueblos;
Luz para ser revelada á los Gentiles, y la gloria de tu pueblo Israel.
Y José y su madre estaban maravillados de las cosas que se decían de él.
Y los bendijo Simeón, y dijo á su madre María: He aquí, éste es puesto para caída y para levantamiento de muchos en Israel; y para señal á la que será contradicho;
Y una espada traspasará tu alma de ti misma, para que sean manifestados los pensamientos de muchos corazones.
Estaba también allí Ana, profetisa, hija de Phanuel, de la tribu de Aser; la cual había venido en grande edad, y había vivido con su marido siete años desde su virginidad;
Y era viuda de hasta ochenta y cuatro años, que no se apartaba del templo, sirviendo de noche y de día con ayunos y oraciones.
Y ésta, sobreviniendo en la misma hora, juntamente confesaba al Señor, y hablaba de él á todos los que esperaban la redención en Jerusalem.
Mas como cumplieron todas las cosas según la ley del Señor, se volvieron á Galilea, á su ciudad de Nazaret.
Y el niño crecía, y fortalecíase, y se henchía de sabiduría; y la gracia de Dios era sobre él.
E iban sus padres todos los años á Jerusalem en la fiesta de la Pascua.
Y cuando fué de doce años, subieron ellos á Jerusalem conforme á la costumbre del día de la fiesta.
Y acabados los días, volviendo ellos, se quedó el niño Jesús en Jerusalem, sin saberlo José y su madre.
Y pensando que estaba en la compañía, anduvieron camino de un día; y le buscaban entre los parientes y entre los conocidos:
Mas como no le hallasen, volvieron á Jerusalem buscándole.
Y aconteció, que tres días después le hallaron en el templo, sentado en medio de los doctores, oyéndoles y preguntándoles.
Y todos los que le oían, se pasmaban de su entendimiento y de sus respuestas.
Y cuando le vieron, se maravillaron; y díjole su madre: Hijo, ¿por qué nos has hecho así? He aquí, tu padre y yo te hemos buscado con dolor.
Entonces él les dice: ¿Qué hay? ¿por qué me buscabais? ¿No sabíais que en los negocios de mi Padre me conviene estar?
Mas ellos no entendieron las palabras que les habló.
Y descendió con ellos, y vino á Nazaret, y estaba sujeto á ellos. Y su madre guardaba todas estas cosas en su corazón.
Y Jesús crecía en sabiduría, y en edad, y en gracia para con Dios y los hombres.
Y en el año quince del imperio de Tiberio César, siendo gobernador de Judea Poncio Pilato, y Herodes tetrarca de Galilea, y su hermano Felipe tetrarca de Iturea y de la provincia de Traconite, y Lisanias tetrarca de Abilinia,
Siendo sumos sacerdotes Anás y Caifás, vino palabra del Señor sobre Juan, hijo de Zacarías, en el desierto.
Y él vino por toda la tierra al rededor del Jordán predicando el bautismo del arrepentimiento para la remisión de pecados;
Como está escrito en el libro de las palabras del profeta Isaías que dice: Voz del que clama en el desierto: Aparejad el camino del Señor, haced derechas sus sendas.
Todo valle se henchirá, y bajaráse todo monte y collado; y los caminos torcidos serán enderezados, y los caminos ásperos allanados;
Y verá toda carne la salvación de Dios.
Y decía á las gentes que salían para ser bautizadas de él: ¡Oh generación de víboras, quién os enseñó á huir de la ira que vendrá?
Haced, pues, frutos dignos de arrepentimiento, y no comencéis á decir en vosotros mismos: Tenemos á Abraham por padre: porque os digo que puede Dios, aun de estas piedras, levantar hijos á Abraham.
Y ya también el hacha está puesta á la raíz de los árboles: todo árbol pues que no hace buen fruto, es cortado, y echado en el fuego.
Y las gentes le preguntaban, diciendo: ¿Pues qué haremos?
Y respondiendo, les dijo: El que tiene dos túnicas, dé al que no tiene; y el que tiene qué comer, haga lo mismo.
Y vinieron también publicanos para ser bautizados, y le dijeron: Maestro, ¿qué haremos?
Y él les dijo: No exijáis más de lo que os está ordenado.
Y le preguntaron también los soldados, diciendo: Y nosotros, ¿qué haremos? Y les dice: No hagáis extorsión á nadie, ni calumniéis; y contentaos con vuestras pagas.
Y estando el pueblo esperando, y pensando todos de Juan en sus corazones, si él fuese el Cristo,
Respondió Juan, diciendo á todos: Yo, á la verdad, os bautizo en agua; mas viene quien es más poderoso que yo, de quien no soy digno de desatar la correa de sus zapatos: él os bautizará en Espíritu Santo y fuego;
Cuyo bieldo está en su mano, y limpiará su era, y juntará el trigo en su alfolí, y la paja quemará en fuego que nunca se apagará.
Y amonestando, otras muchas cosas también anunciaba al pueblo.
Entonces Herodes el tetrarca, siendo reprendido por él á causa de Herodías, mujer de Felipe su hermano, y de todas las maldades que había hecho Herodes,
Añadió también esto sobre todo, que encerró á Juan en la cárcel.
Y aconteció que, como todo el pueblo se bautizaba, también Jesús fué bautizado; y orando, el cielo se abrió,
Y descendió el Espíritu Santo sobre él en forma corporal, como paloma, y fué hecha una voz del cielo que decía: Tú eres mi Hijo amado, en ti me he complacido.
Y el mismo Jesús comenzaba á ser como de treinta años, hijo de José, como se creía; que fué hijo de Elí,
Que fué de Mathat, que fué de Leví, que fué de Melchî, que fué de Janna, que fué de José,
Que fué de Mattathías, que fué de Amós, que fué de Nahum, que fué de Esli,
Que fué de Naggai, que fué de Maat, que fué de Mattathías, que fué de Semei, que fué de José, que fué de Judá,
Que fué de Joanna, que fué de Rhesa, que fué de Zorobabel, que fué de Salathiel,
Que fué de Neri, que fué de Melchî, que fué de Abdi, que fué de Cosam, que fué de Elmodam, que fué de Er,
Que fué de Josué, que fué de Eliezer, que fué de Joreim, que fué de Mathat,
Que fué de Leví, que fué de Simeón, que fué de Judá, que fué de José, que fué de Jonán, que fué de Eliachîm,
Que fué de Melea, que fué de Mainán, que fué de Mattatha, que fué de Nathán,
Que fué de David, que fué de Jessé, que fué de Obed, que fué de Booz, que fué de Salmón, que fué de Naassón,
Que fué de Aminadab, que fué de Aram, que fué de Esrom, que fué de Phares,
Que fué de Judá, que fué de Jacob, que fué de Isaac, que fué de Abraham, que fué de Thara, que fué de Nachôr,
Que fué de Saruch, que fué de Ragau, que fué de Phalec, que fué de Heber,
Que fué de Sala, que fué de Cainán, que fué de Arphaxad, que fué de Sem, que fué de Noé, que fué de Lamech,
Que fué de Mathusala, que fué de Enoch, que fué de Jared, que fué de Maleleel,
Que fué de Cainán, que fué de Enós, que fué de Seth, que fué de Adam, que fué de Dios.
Y jesús, lleno del Espíritu Santo, volvió del Jordán, y fué llevado por el Espíritu al desierto
Por cuarenta días, y era tentado del diablo. Y no comió cosa en aquellos días: los cuales pasados, tuvo hambre.
Entonces el diablo le dijo: Si eres Hijo de Dios, di á esta piedra que se haga pan.
Y Jesús respondiéndole, dijo: Escrito está: Que no con pan solo vivirá el hombre, mas con toda palabra de Dios.
Y le llevó el diablo á un alto monte, y le mostró en un momento de tiempo todos los reinos de la tierra.
Y le dijo el diablo: A ti te daré toda esta potestad, y la gloria de ellos; porque á mí es entregada, y á quien quiero la doy:
Pues si tú adorares delante de mí, serán todos tuyos.
Y respondiendo Jesús, le dijo: Vete de mí, Satanás, porque escrito está: A tu Señor Dios adorarás, y á él solo servirás.
Y le llevó á Jerusalem, y púsole sobre las almenas del templo, y le dijo: Si eres Hijo de Dios, échate de aquí abajo:
Porque escrito está: Que á sus ángeles mandará de ti, que te guarden;
Y en las manos te llevarán, porque no dañes tu pie en piedra.
Y respondiendo Jesús, le dijo: Dicho está: No tentarás al Señor tu Dios.
Y acabada toda tentación, el diablo se fué de él por un tiempo.
Y Jesús volvió en virtud del Espíritu á Galilea, y salió la fama de él por toda la tierra de alrededor.
Y enseñaba en las sinagogas de ellos, y era glorificado de todos.
Y vino á Nazaret, donde había sido criado; y entró, conforme á su costumbre, el día del sábado en la sinagoga, y se levantó á leer.
Y fuéle dado el libro del profeta Isaías; y como abrió el libro, halló el lugar donde estaba escrito:
El Espíritu del Señor es sobre mí, por cuanto me ha ungido para dar buenas nuevas á los pobres: me ha enviado para sanar á los quebrantados de corazón; para pregonar á los cautivos libertad, y á los ciegos vista; para poner en libertad á los quebrantados:
Para predicar el año agradable del Señor.
Y rollando el libro, lo dió al ministro, y sentóse: y los ojos de todos en la sinagoga estaban fijos en él.
Y comenzó á decirles: Hoy se ha cumplido esta Escritura en vuestros oídos.
Y todos le daban testimonio, y estaban maravillados de las palabras de gracia que salían de su boca, y decían: ¿No es éste el hijo de José?
Y les dijo: Sin duda me diréis este refrán: Médico, cúrate á ti mismo: de tantas cosas que hemos oído haber sido hechas en Capernaum, haz también aquí en tu tierra.
Y dijo: De cierto os digo, que ningún profeta es acepto en su tierra.
Mas en verdad os digo, que muchas viudas había en Israel en los días de Elías, cuando el cielo fué cerrado por tres años y seis meses, que hubo una grande hambre en toda la tierra;
Pero á ninguna de ellas fué enviado Elías, sino á Sarepta de Sidón, á una mujer viuda.
Y muchos leprosos había en Israel en tiempo del profeta Eliseo; mas ninguno de ellos fué limpio, sino Naamán el Siro.
Entonces todos en la sinagoga fueron llenos de ira, oyendo estas cosas;
Y levantándose, le echaron fuera de la ciudad, y le llevaron hasta la cumbre del monte sobre el cual la ciudad de ellos estaba edificada, para despeñarle.
Mas él, pasando por medio de ellos, se fué.
Y descendió á Capernaum, ciudad de Galilea. Y los enseñaba en los sábados.
Y se maravillaban de su doctrina, porque su palabra era con potestad.
Y estaba en la sinagoga un hombre que tenía un espíritu de un demonio inmundo, el cual exclamó á gran voz,
Diciendo: Déjanos, ¿qué tenemos contigo, Jesús Nazareno? ¿has venido á destruirnos? Yo te conozco quién eres, el Santo de Dios.
Y Jesús le increpó, diciendo: Enmudece, y sal de él. Entonces el demonio, derribándole en medio, salió de él, y no le hizo daño alguno.
Y hubo espanto en todos, y hablaban unos á otros, diciendo: ¿Qué palabra es ésta, que con autoridad y potencia manda á los espíritus inmundos, y salen?
Y la fama de él se divulgaba de todas partes por todos los lugares de la comarca.
Y levantándose Jesús de la sinagoga, entró en casa de Simón: y la suegra de Simón estaba con una grande fiebre; y le rogaron por ella.
E inclinándose hacia ella, riñó á la fiebre; y la fiebre la dejó; y ella levantándose luego, les servía.
Y poniéndose el sol, todos los que tenían enfermos de diversas enfermedades, los traían á él; y él, poniendo las manos sobre cada uno de ellos, los sanaba.
Y salían también demonios de muchos, dando voces, y diciendo: Tú eres el Hijo de Dios. Mas riñéndolos no les dejaba hablar; porque sabían que él era el Cristo.
Y siendo ya de día salió, y se fué á un lugar desierto: y las gentes le buscaban, y vinieron hasta él; y le detenían para que no se apartase de ellos.
Mas él les dijo: Que también á otras ciudades es necesario que anuncie el evangelio del reino de Dios; porque para esto soy enviado.
Y predicaba en las sinagogas de Galilea.
Y aconteció, que estando él junto al lago de Genezaret, las gentes se agolpaban sobre él para oir la palabra de Dios.
Y vió dos barcos que estaban cerca de la orilla del lago: y los pescadores, habiendo descendido de ellos, lavaban sus redes.
Y entrado en uno de estos barcos, el cual era de Simón, le rogó que lo desviase de tierra un poco; y sentándose, enseñaba desde el barco á las gentes.
Y como cesó de hablar, dijo á Simón: Tira á alta mar, y echad vuestras redes para pescar.
Y respondiendo Simón, le dijo: Maestro, habiendo trabajado toda la noche, nada hemos tomado; mas en tu palabra echaré la red.
Y habiéndolo hecho, encerraron gran multitud de pescado, que su red se rompía.
E hicieron señas á los compañeros que estaban en el otro barco, que viniesen á ayudarles; y vinieron, y llenaron ambos barcos, de tal manera que se anegaban.
Lo cual viendo Simón Pedro, se derribó de rodillas á Jesús, diciendo: Apártate de mí, Señor, porque soy hombre pecador.
Porque temor le había rodeado, y á todos los que estaban con él, de la presa de los peces que habían tomado;
Y asimismo á Jacobo y á Juan, hijos de Zebedeo, que eran compañeros de Simón. Y Jesús dijo á Simón: No temas: desde ahora pescarás hombres.
Y como llegaron á tierra los barcos, dejándolo todo, le siguieron.
Y aconteció que estando en una ciudad, he aquí un hombre lleno de lepra, el cual viendo á Jesús, postrándose sobre el rostro, le rogó, diciendo: Señor, si quieres, puedes limpiarme.
Entonces, extendiendo la mano, le tocó diciendo: Quiero: sé limpio. Y luego la lepra se fué de él.
Y él le mandó que no lo dijese á nadie: Mas ve, díjole, muéstrate al sacerdote, y ofrece por tu limpieza, como mandó Moisés, para testimonio á ellos.
Empero tanto más se extendía su fama: y se juntaban muchas gentes á oir y ser sanadas de sus enfermedades.
Mas él se apartaba á los desiertos, y oraba.
Y aconteció un día, que él estaba enseñando, y los Fariseos y doctores de la ley estaban sentados, los cuales habían venido de todas las aldeas de Galilea, y de Judea y Jerusalem: y la virtud del Señor estaba allí para sanarlos.
Y he aquí unos hombres, que traían sobre un lecho un hombre que estaba paralítico; y buscaban meterle, y ponerle delante de él.
Y no hallando por donde meterle á causa de la multitud, subieron encima de la casa, y por el tejado le bajaron con el lecho en medio, delante de Jesús;
El cual, viendo la fe de ellos, le dice: Hombre, tus pecados te son perdonados.
Entonces los escribas y los Fariseos comenzaron á pensar, diciendo: ¿Quién es éste que habla blasfemias? ¿Quién puede perdonar pecados sino sólo Dios?
Jesús entonces, conociendo los pensamientos de ellos, respondiendo les dijo: ¿Qué pensáis en vuestros corazones?
¿Qué es más fácil, decir: Tus pecados te son perdonados, ó decir: Levántate y anda?
Pues para que sepáis que el Hijo del hombre tiene potestad en la tierra de perdonar pecados, (dice al paralítico): A ti digo, levántate, toma tu lecho, y vete á tu casa.
Y luego, levantándose en presencia de ellos, y tomando aquel en que estaba echado, se fué á su casa, glorificando á Dios.
Y tomó espanto á todos, y glorificaban á Dios; y fueron llenos de temor, diciendo: Hemos visto maravillas hoy.
Y después de estas cosas salió, y vió á un publicano llamado Leví, sentado al banco de los públicos tributos, y le dijo: Sígueme.
Y dejadas todas las cosas, levantándose, le siguió.
E hizo Leví gran banquete en su casa; y había mucha compañía de publicanos y de otros, los cuales estaban á la mesa con ellos.
Y los escribas y los Fariseos murmuraban contra sus discípulos, diciendo: ¿Por qué coméis y bebéis con los publicanos y pecadores?
Y respondiendo Jesús, les dijo: Los que están sanos no necesitan médico, sino los que están enfermos.
No he venido á llamar justos, sino pecadores á arrepentimiento.
Entonces ellos le dijeron: ¿Por qué los discípulos de Juan ayunan muchas veces y hacen oraciones, y asimismo los de los Fariseos, y tus discípulos comen y beben?
Y él les dijo: ¿Podéis hacer que los que están de bodas ayunen, entre tanto que el esposo está con ellos?
Empero vendrán días cuando el esposo les será quitado: entonces ayunarán en aquellos días.
Y les decía también una parábola: Nadie mete remiendo de paño nuevo en vestido viejo; de otra manera el nuevo rompe, y al viejo no conviene remiendo nuevo.
Y nadie echa vino nuevo en cueros viejos; de otra manera el vino nuevo romperá los cueros, y el vino se derramará, y los cueros se perderán.
Mas el vino nuevo en cueros nuevos se ha de echar; y lo uno y lo otro se conserva.
Y ninguno que bebiere del añejo, quiere luego el nuevo; porque dice: El añejo es mejor.
Y como acabó todas sus palabras oyéndole el pueblo, entró en Capernaum.
Y el siervo de un centurión, al cual tenía él en estima, estaba enfermo y á punto de morir.
Y como oyó hablar de Jesús, envió á él los ancianos de los Judíos, rogándole que viniese y librase á su siervo.
Y viniendo ellos á Jesús, rogáronle con diligencia, diciéndole: Porque es digno de concederle esto;
Que ama nuestra nación, y él nos edificó una sinagoga.
Y Jesús fué con ellos. Mas como ya no estuviesen lejos de su casa, envió el centurión amigos á él, diciéndole: Señor, no te incomodes, que no soy digno que entres debajo de mi tejado;
Por lo cual ni aun me tuve por digno de venir á ti; mas di la palabra, y mi siervo será sano.
Porque también yo soy hombre puesto en potestad, que tengo debajo de mí soldados; y digo á éste: Ve, y va; y al otro: Ven, y viene; y á mi siervo: Haz esto, y lo hace.
Lo cual oyendo Jesús, se maravilló de él, y vuelto, dijo á las gentes que le seguían: Os digo que ni aun en Israel he hallado tanta fe.
Y vueltos á casa los que habían sido enviados, hallaron sano al siervo que había estado enfermo.
Y aconteció después, que él iba á la ciudad que se llama Naín, é iban con él muchos de sus discípulos, y gran compañía.
Y como llegó cerca de la puerta de la ciudad, he aquí que sacaban fuera á un difunto, unigénito de su madre, la cual también era viuda: y había con ella grande compañía de la ciudad.
Y como el Señor la vió, compadecióse de ella, y le dice: No llores.
Y acercándose, tocó el féretro: y los que lo llevaban, pararon. Y dice: Mancebo, á ti digo, levántate.
Entonces se incorporó el que había muerto, y comenzó á hablar. Y dióle á su madre.
Y todos tuvieron miedo, y glorificaban á Dios, diciendo: Que un gran profeta se ha levantado entre nosotros; y que Dios ha visitado á su pueblo.
Y salió esta fama de él por toda Judea, y por toda la tierra de alrededor.
Y sus discípulos dieron á Juan las nuevas de todas estas cosas: y llamó Juan á dos de sus discípulos,
Y envió á Jesús, diciendo: ¿Eres tú aquél que había de venir, ó esperaremos á otro?
Y como los hombres vinieron á él, dijeron: Juan el Bautista nos ha enviado á ti, diciendo: ¿Eres tú aquél que había de venir, ó esperaremos á otro?
Y en la misma hora sanó á muchos de enfermedades y plagas, y de espíritus malos; y á muchos ciegos dió la vista.
Y respondiendo Jesús, les dijo: Id, dad las nuevas á Juan de lo que habéis visto y oído: que los ciegos ven, los cojos andan, los leprosos son limpiados, los sordos oyen, los muertos resucitan, á los pobres es anunciado el evangelio:
Y bienaventurado es el que no fuere escandalizado en mí.
Y como se fueron los mensajeros de Juan, comenzó á hablar de Juan á las gentes: ¿Qué salisteis á ver al desierto? ¿una caña que es agitada por el viento?
Mas ¿qué salisteis á ver? ¿un hombre cubierto de vestidos delicados? He aquí, los que están en vestido precioso, y viven en delicias, en los palacios de los reyes están.
Mas ¿qué salisteis á ver? ¿un profeta? También os digo, y aun más que profeta.
Este es de quien está escrito: He aquí, envío mi mensajero delante de tu faz, el cual aparejará tu camino delante de ti.
Porque os digo que entre los nacidos de mujeres, no hay mayor profeta que Juan el Bautista: mas el más pequeño en el reino de los cielos es mayor que él.
Y todo el pueblo oyéndole, y los publicanos, justificaron á Dios, bautizándose con el bautismo de Juan.
Mas los Fariseos y los sabios de la ley, desecharon el consejo de Dios contra sí mismos, no siendo bautizados de él.
Y dice el Señor: ¿A quién, pues, compararé los hombres de esta generación, y á qué son semejantes?
Semejantes son á los muchachos sentados en la plaza, y que dan voces los unos á los otros, y dicen: Os tañimos con flautas, y no bailasteis: os endechamos, y no llorasteis.
Porque vino Juan el Bautista, que ni comía pan, ni bebía vino, y decís: Demonio tiene.
Vino el Hijo del hombre, que come y bebe, y decís: He aquí un hombre comilón, y bebedor de vino, amigo de publicanos y de pecadores.
Mas la sabiduría es justificada de todos sus hijos.
Y le rogó uno de los Fariseos, que comiese con él. Y entrado en casa del Fariseo, sentóse á la mesa.
Y he aquí una mujer que había sido pecadora en la ciudad, como entendió que estaba á la mesa en casa de aquel Fariseo, trajo un alabastro de ungüento,
Y estando detrás á sus pies, comenzó llorando á regar con lágrimas sus pies, y los limpiaba con los cabellos de su cabeza; y besaba sus pies, y los ungía con el ungüento.
Y como vió esto el Fariseo que le había convidado, habló entre sí, diciendo: Este, si fuera profeta, conocería quién y cuál es la mujer que le toca, que es pecadora.
Entonces respondiendo Jesús, le dijo: Simón, una cosa tengo que decirte. Y él dice: Di, Maestro.
Un acreedor tenía dos deudores: el uno le debía quinientos denarios, y el otro cincuenta;
Y no teniendo ellos de qué pagar, perdonó á ambos. Di, pues, ¿cuál de éstos le amará más?
Y respondiendo Simón, dijo: Pienso que aquél al cual perdonó más. Y él le dijo: Rectamente has juzgado.
Y vuelto á la mujer, dijo á Simón: ¿Ves esta mujer? Entré en tu casa, no diste agua para mis pies; mas ésta ha regado mis pies con lágrimas, y los ha limpiado con los cabellos.
No me diste beso, mas ésta, desde que entré, no ha cesado de besar mis pies.
No ungiste mi cabeza con óleo; mas ésta ha ungido con ungüento mis pies.
Por lo cual te digo que sus muchos pecados son perdonados, porque amó mucho; mas al que se perdona poco, poco ama.
Y á ella dijo: Los pecados te son perdonados.
Y los que estaban juntamente sentados á la mesa, comenzaron á decir entre sí: ¿Quién es éste, que también perdona pecados?
Y dijo á la mujer: Tu fe te ha salvado, ve en paz.
Y aconteció después, que él caminaba por todas las ciudades y aldeas, predicando y anunciando el evangelio del reino de Dios, y los doce con él,
Y algunas mujeres que habían sido curadas de malos espíritus y de enfermedades: María, que se llamaba Magdalena, de la cual habían salido siete demonios,
Y Juana, mujer de Chuza, procurador de Herodes, y Susana, y otras muchas que le servían de sus haciendas.
Y como se juntó una grande compañía, y los que estaban en cada ciudad vinieron á él, dijo por una parábola:
Uno que sembraba, salió á sembrar su simiente; y sembrando, una parte cayó junto al camino, y fué hollada; y las aves del cielo la comieron.
Y otra parte cayó sobre la piedra; y nacida, se secó, porque no tenía humedad.
Y otra parte cayó entre las espinas; y naciendo las espinas juntamente, la ahogaron.
Y otra parte cayó en buena tierra, y cuando fué nacida, llevó fruto á ciento por uno. Diciendo estas cosas clamaba: El que tiene oídos para oir, oiga.
Y sus discípulos le preguntaron, diciendo, qué era esta parábola.
Y él dijo: A vosotros es dado conocer los misterios del reino de Dios; mas á los otros por parábolas, para que viendo no vean, y oyendo no entiendan.
Es pues ésta la parábola: La simiente es la palabra de Dios.
Y los de junto al camino, éstos son los que oyen; y luego viene el diablo, y quita la palabra de su corazón, porque no crean y se salven.
Y los de sobre la piedra, son los que habiendo oído, reciben la palabra con gozo; mas éstos no tienen raíces; que á tiempo creen, y en el tiempo de la tentación se apartan.
Y la que cayó entre las espinas, éstos son los que oyeron; mas yéndose, son ahogados de los cuidados y de las riquezas y de los pasatiempos de la vida, y no llevan fruto.
Mas la que en buena tierra, éstos son los que con corazón bueno y recto retienen la palabra oída, y llevan fruto en paciencia.
Ninguno que enciende la antorcha la cubre con vasija, ó la pone debajo de la cama; mas la pone en un candelero, para que los que entran vean la luz.
Porque no hay cosa oculta, que no haya de ser manifestada; ni cosa escondida, que no haya de ser entendida, y de venir á luz.
Mirad pues cómo oís; porque á cualquiera que tuviere, le será dado; y á cualquiera que no tuviere, aun lo que parece tener le será quitado.
Y vinieron á él su madre y hermanos; y no podían llegar á él por causa de la multitud.
Y le fué dado aviso, diciendo: Tu madre y tus hermanos están fuera, que quieren verte.
El entonces respondiendo, les dijo: Mi madre y mis hermanos son los que oyen la palabra de Dios, y la ejecutan.
Y aconteció un día que él entró en un barco con sus discípulos, y les dijo: Pasemos á la otra parte del lago. Y partieron.
Pero mientras ellos navegaban, él se durmió. Y sobrevino una tempestad de viento en el lago; y henchían de agua, y peligraban.
Y llegándose á él, le despertaron, diciendo: ¡Maestro, Maestro, que perecemos! Y despertado él, increpó al viento y á la tempestad del agua; y cesaron, y fué hecha bonanza.
Y les dijo: ¿Qué es de vuestra fe? Y atemorizados, se maravillaban, diciendo los unos á los otros: ¿Quién es éste, que aun á los vientos y al agua manda, y le obedecen?
Y navegaron á la tierra de los Gadarenos, que está delante de Galilea.
Y saliendo él á tierra, le vino al encuentro de la ciudad un hombre que tenía demonios ya de mucho tiempo; y no vestía vestido, ni estaba en casa, sino por los sepulcros.
El cual, como vió á Jesús, exclamó y se postró delante de él, y dijo á gran voz: ¿Qué tengo yo contigo, Jesús, Hijo del Dios Altísimo? Ruégote que no me atormentes.
(Porque mandaba al espíritu inmundo que saliese del hombre: porque ya de mucho tiempo le arrebataba; y le guardaban preso con cadenas y grillos; mas rompiendo las prisiones, era agitado del demonio por los desiertos.)
Y le preguntó Jesús, diciendo: ¿Qué nombre tienes? Y él dijo: Legión. Porque muchos demonios habían entrado en él.
Y le rogaban que no les mandase ir al abismo.
Y había allí un hato de muchos puercos que pacían en el monte; y le rogaron que los dejase entrar en ellos; y los dejó.
Y salidos los demonios del hombre, entraron en los puercos; y el hato se arrojó de un despeñadero en el lago, y ahogóse.
Y los pastores, como vieron lo que había acontecido, huyeron, y yendo dieron aviso en la ciudad y por las heredades.
Y salieron á ver lo que había acontecido; y vinieron á Jesús, y hallaron sentado al hombre de quien habían salido los demonios, vestido, y en su juicio, á los pies de Jesús; y tuvieron miedo.
Y les contaron los que lo habían visto, cómo había sido salvado aquel endemoniado.
Entonces toda la multitud de la tierra de los Gadarenos alrededor, le rogaron que se fuese de ellos; porque tenían gran temor. Y él, subiendo en el barco, volvióse.
Y aquel hombre, de quien habían salido los demonios, le rogó para estar con él; mas Jesús le despidió, diciendo:
Vuélvete á tu casa, y cuenta cuán grandes cosas ha hecho Dios contigo. Y él se fué, publicando por toda la ciudad cuán grandes cosas había hecho Jesús con él.
Y aconteció que volviendo Jesús, recibióle la gente; porque todos le esperaban.
Y he aquí un varón, llamado Jairo, y que era príncipe de la sinagoga, vino, y cayendo á los pies de Jesús, le rogaba que entrase en su casa;
Porque tenía una hija única, como de doce años, y ella se estaba muriendo. Y yendo, le apretaba la compañía.
Y una mujer, que tenía flujo de sangre hacía ya doce años, la cual había gastado en médicos toda su hacienda, y por ninguno había podido ser curada,
Llegándose por las espaldas, tocó el borde de su vestido; y luego se estancó el flujo de su sangre.
Entonces Jesús dijo: ¿Quién es el que me ha tocado? Y negando todos, dijo Pedro y los que estaban con él: Maestro, la compañía te aprieta y oprime, y dices: ¿Quién es el que me ha tocado?
Y Jesús dijo: Me ha tocado alguien; porque yo he conocido que ha salido virtud de mí.
Entonces, como la mujer vió que no se había ocultado, vino temblando, y postrándose delante de él declaróle delante de todo el pueblo la causa por qué le había tocado, y cómo luego había sido sana.
Y él le dijo: Hija, tu fe te ha salvado: ve en paz.
Estando aún él hablando, vino uno del príncipe de la sinagoga á decirle: Tu hija es muerta, no des trabajo al Maestro.
Y oyéndolo Jesús, le respondió: No temas: cree solamente, y será salva.
Y entrado en casa, no dejó entrar á nadie consigo, sino á Pedro, y á Jacobo, y á Juan, y al padre y á la madre de la moza.
Y lloraban todos, y la plañían. Y él dijo: No lloréis; no es muerta, sino que duerme.
Y hacían burla de él, sabiendo que estaba muerta.
Mas él, tomándola de la mano, clamó, diciendo: Muchacha, levántate.
Entonces su espíritu volvió, y se levantó luego: y él mandó que le diesen de comer.
Y sus padres estaban atónitos; á los cuales él mandó, que á nadie dijesen lo que había sido hecho.
Y juntando á sus doce discípulos, les dió virtud y potestad sobre todos los demonios, y que sanasen enfermedades.
Y los envió á que predicasen el reino de Dios, y que sanasen á los enfermos.
Y les dice: No toméis nada para el camino, ni báculo, ni alforja, ni pan, ni dinero; ni tengáis dos vestidos cada uno.
Y en cualquiera casa en que entrareis, quedad allí, y de allí salid.
Y todos los que no os recibieren, saliéndoos de aquella ciudad, aun el polvo sacudid de vuestros pies en testimonio contra ellos.
Y saliendo, rodeaban por todas las aldeas, anunciando el evangelio, y sanando por todas partes.
Y oyó Herodes el tetrarca todas las cosas que hacía; y estaba en duda, porque decían algunos: Juan ha resucitado de los muertos;
Y otros: Elías ha aparecido; y otros: Algún profeta de los antiguos ha resucitado.
Y dijo Herodes: A Juan yo degollé: ¿quién pues será éste, de quien yo oigo tales cosas? Y procuraba verle.
Y vueltos los apóstoles, le contaron todas las cosas que habían hecho. Y tomándolos, se retiró aparte á un lugar desierto de la ciudad que se llama Bethsaida.
Y como lo entendieron las gentes, le siguieron; y él las recibió, y les hablaba del reino de Dios, y sanaba á los que tenían necesidad de cura.
Y el día había comenzado á declinar; y llegándose los doce, le dijeron: Despide á las gentes, para que yendo á las aldeas y heredades de alrededor, procedan á alojarse y hallen viandas; porque aquí estamos en lugar desierto.
Y les dice: Dadles vosotros de comer. Y dijeron ellos: No tenemos más que cinco panes y dos pescados, si no vamos nosotros á comprar viandas para toda esta compañía.
Y eran como cinco mil hombres. Entonces dijo á sus discípulos: Hacedlos sentar en ranchos, de cincuenta en cincuenta.
Y así lo hicieron, haciéndolos sentar á todos.
Y tomando los cinco panes y los dos pescados, mirando al cielo los bendijo, y partió, y dió á sus discípulos para que pusiesen delante de las gentes.
Y comieron todos, y se hartaron; y alzaron lo que les sobró, doce cestos de pedazos.
Y aconteció que estando él solo orando, estaban con él los discípulos; y les preguntó diciendo: ¿Quién dicen las gentes que soy?
Y ellos respondieron, y dijeron: Juan el Bautista; y otros, Elías; y otros, que algún profeta de los antiguos ha resucitado.
Y les dijo: ¿Y vosotros, quién decís que soy? Entonces respondiendo Simón Pedro, dijo: El Cristo de Dios.
Mas él, conminándolos, mandó que á nadie dijesen esto;
Diciendo: Es necesario que el Hijo del hombre padezca muchas cosas, y sea desechado de los ancianos, y de los príncipes de los sacerdotes, y de los escribas, y que sea muerto, y resucite al tercer día.
Y decía á todos: Si alguno quiere venir en pos de mí, niéguese á sí mismo, y tome su cruz cada día, y sígame.
Porque cualquiera que quisiere salvar su vida, la perderá; y cualquiera que perdiere su vida por causa de mí, éste la salvará.
Porque ¿qué aprovecha al hombre, si granjeare todo el mundo, y se pierda él á sí mismo, ó corra peligro de sí?
Porque el que se avergonzare de mí y de mis palabras, de este tal el Hijo del hombre se avergonzará cuando viniere en su gloria, y del Padre, y de los santos ángeles.
Y os digo en verdad, que hay algunos de los que están aquí, que no gustarán la muerte, hasta que vean el reino de Dios.
Y aconteció como ocho días después de estas palabras, que tomó á Pedro y á Juan y á Jacobo, y subió al monte á orar.
Y entre tanto que oraba, la apariencia de su rostro se hizo otra, y su vestido blanco y resplandeciente.
Y he aquí dos varones que hablaban con él, los cuales eran Moisés y Elías;
Que aparecieron en majestad, y hablaban de su salida, la cual había de cumplir en Jerusalem.
Y Pedro y los que estaban con él, estaban cargados de sueño: y como despertaron, vieron su majestad, y á aquellos dos varones que estaban con él.
Y aconteció, que apartándose ellos de él, Pedro dice á Jesús: Maestro, bien es que nos quedemos aquí: y hagamos tres pabellones, uno para ti, y uno para Moisés, y uno para Elías; no sabiendo lo que se decía.
Y estando él hablando esto, vino una nube que los cubrió; y tuvieron temor, entrando ellos en la nube.
Y vino una voz de la nube, que decía: Este es mi Hijo amado; á él oid.
Y pasada aquella voz, Jesús fué hallado solo: y ellos callaron; y por aquellos días no dijeron nada á nadie de lo que habían visto.
Y aconteció al día siguiente, que apartándose ellos del monte, gran compañía les salió al encuentro.
Y he aquí, un hombre de la compañía clamó, diciendo: Maestro, ruégote que veas á mi hijo; que es el único que tengo:
Y he aquí un espíritu le toma, y de repente da voces; y le despedaza y hace echar espuma, y apenas se aparta de él quebrantándole.
Y rogué á tus discípulos que le echasen fuera, y no pudieron.
Y respondiendo Jesús, dice: ¡Oh generación infiel y perversa! ¿hasta cuándo tengo de estar con vosotros, y os sufriré? Trae tu hijo acá.
Y como aun se acercaba, el demonio le derribó y despedazó: mas Jesús increpó al espíritu inmundo, y sanó al muchacho, y se lo volvió á su padre.
Y todos estaban atónitos de la grandeza de Dios. Y maravillándose todos de todas las cosas que hacía, dijo á sus discípulos:
Poned vosotros en vuestros oídos estas palabras; porque ha de acontecer que el Hijo del hombre será entregado en manos de hombres.
Mas ellos no entendían esta palabra, y les era encubierta para que no la entendiesen; y temían preguntarle de esta palabra.
Entonces entraron en disputa, cuál de ellos sería el mayor.
Mas Jesús, viendo los pensamientos del corazón de ellos, tomó un niño, y púsole junto á sí,
Y les dice: Cualquiera que recibiere este niño en mi nombre, á mí recibe; y cualquiera que me recibiere á mí, recibe al que me envió; porque el que fuere el menor entre todos vosotros, éste será el grande.
Entonces respondiendo Juan, dijo: Maestro, hemos visto á uno que echaba fuera demonios en tu nombre; y se lo prohibimos, porque no sigue con nosotros.
Jesús le dijo: No se lo prohibáis; porque el que no es contra nosotros, por nosotros es.
Y aconteció que, como se cumplió el tiempo en que había de ser recibido arriba, él afirmó su rostro para ir á Jerusalem.
Y envió mensajeros delante de sí, los cuales fueron y entraron en una ciudad de los Samaritanos, para prevenirle.
Mas no le recibieron, porque era su traza de ir á Jerusalem.
Y viendo esto sus discípulos Jacobo y Juan, dijeron: Señor, ¿quieres que mandemos que descienda fuego del cielo, y los consuma, como hizo Elías?
Entonces volviéndose él, los reprendió, diciendo: Vosotros no sabéis de qué espíritu sois;
Porque el Hijo del hombre no ha venido para perder las almas de los hombres, sino para salvarlas. Y se fueron á otra aldea.
Y aconteció que yendo ellos, uno le dijo en el camino: Señor, te seguiré donde quiera que fueres.
Y le dijo Jesús: Las zorras tienen cuevas, y las aves de los cielos nidos; mas el Hijo del hombre no tiene donde recline la cabeza.
Y dijo á otro: Sígueme. Y él dijo: Señor, déjame que primero vaya y entierre á mi padre.
Y Jesús le dijo: Deja los muertos que entierren á sus muertos; y tú, ve, y anuncia el reino de Dios.
Entonces también dijo otro: Te seguiré, Señor; mas déjame que me despida primero de los que están en mi casa.
Y Jesús le dijo: Ninguno que poniendo su mano al arado mira atrás, es apto para el reino de Dios.
Y después de estas cosas, designó el Señor aun otros setenta, los cuales envió de dos en dos delante de sí, á toda ciudad y lugar á donde él había de venir.
Y les decía: La mies á la verdad es mucha, mas los obreros pocos; por tanto, rogad al Señor de la mies que envíe obreros á su mies.
Andad, he aquí yo os envío como corderos en medio de lobos.
No llevéis bolsa, ni alforja, ni calzado; y á nadie saludéis en el camino.
En cualquiera casa donde entrareis, primeramente decid: Paz sea á esta casa.
Y si hubiere allí algún hijo de paz, vuestra paz reposará sobre él; y si no, se volverá á vosotros.
Y posad en aquella misma casa, comiendo y bebiendo lo que os dieren; porque el obrero digno es de su salario. No os paséis de casa en casa.
Y en cualquier ciudad donde entrareis, y os recibieren, comed lo que os pusieren delante;
Y sanad los enfermos que en ella hubiere, y decidles: Se ha llegado á vosotros el reino de Dios.
Mas en cualquier ciudad donde entrareis, y no os recibieren, saliendo por sus calles, decid:
Aun el polvo que se nos ha pegado de vuestra ciudad á nuestros pies, sacudimos en vosotros: esto empero sabed, que el reino de los cielos se ha llegado á vosotros.
Y os digo que los de Sodoma tendrán más remisión aquel día, que aquella ciudad.
¡Ay de ti, Corazín! ¡Ay de ti, Bethsaida! que si en Tiro y en Sidón hubieran sido hechas las maravillas que se han hecho en vosotras, ya días ha que, sentados en cilicio y ceniza, se habrían arrepentido.
Por tanto, Tiro y Sidón tendrán más remisión que vosotras en el juicio.
Y tú, Capernaum, que hasta los cielos estás levantada, hasta los infiernos serás abajada.
El que á vosotros oye, á mí oye; y el que á vosotros desecha, á mí desecha; y el que á mí desecha, desecha al que me envió.
Y volvieron los setenta con gozo, diciendo: Señor, aun los demonios se nos sujetan en tu nombre.
Y les dijo: Yo veía á Satanás, como un rayo, que caía del cielo.
He aquí os doy potestad de hollar sobre las serpientes y sobre los escorpiones, y sobre toda fuerza del enemigo, y nada os dañará.
Mas no os gocéis de esto, que los espíritus se os sujetan; antes gozaos de que vuestros nombres están escritos en los cielos.
En aquella misma hora Jesús se alegró en espíritu, y dijo: Yo te alabo, oh Padre, Señor del cielo y de la tierra, que escondiste estas cosas á los sabios y entendidos, y las has revelado á los pequeños: así, Padre, porque así te agradó.
Todas las cosas me son entregadas de mi Padre: y nadie sabe quién sea el Hijo sino el Padre; ni quién sea el Padre, sino el Hijo, y á quien el Hijo lo quisiere revelar.
Y vuelto particularmente á los discípulos, dijo: Bienaventurados los ojos que ven lo que vosotros veis:
Porque os digo que muchos profetas y reyes desearon ver lo que vosotros veis, y no lo vieron; y oir lo que oís, y no lo oyeron.
Y he aquí, un doctor de la ley se levantó, tentándole y diciendo: Maestro, ¿haciendo qué cosa poseeré la vida eterna?
Y él le dijo: ¿Qué está escrito en la ley? ¿cómo lees?
Y él respondiendo, dijo: Amarás al Señor tu Dios de todo tu corazón, y de toda tu alma, y de todas tus fuerzas, y de todo tu entendimiento; y á tu prójimo como á ti mismo.
Y díjole: Bien has respondido: haz esto, y vivirás.
Mas él, queriéndose justificar á sí mismo, dijo á Jesús: ¿Y quién es mi prójimo?
Y respondiendo Jesús, dijo: Un hombre descendía de Jerusalem á Jericó, y cayó en manos de ladrones, los cuales le despojaron; é hiriéndole, se fueron, dejándole medio muerto.
Y aconteció, que descendió un sacerdote por aquel camino, y viéndole, se pasó de un lado.
Y asimismo un Levita, llegando cerca de aquel lugar, y viéndole, se pasó de un lado.
Mas un Samaritano que transitaba, viniendo cerca de él, y viéndole, fué movido á misericordia;
Y llegándose, vendó sus heridas, echándo les aceite y vino; y poniéndole sobre su cabalgadura, llevóle al mesón, y cuidó de él.
Y otro día al partir, sacó dos denarios, y diólos al huésped, y le dijo: Cuídamele; y todo lo que de más gastares, yo cuando vuelva te lo pagaré.
¿Quién, pues, de estos tres te parece que fué el prójimo de aquél que cayó en manos de los ladrones?
Y él dijo: El que usó con él de misericordia. Entonces Jesús le dijo: Ve, y haz tú lo mismo.
Y aconteció que yendo, entró él en una aldea: y una mujer llamada Marta, le recibió en su casa.
Y ésta tenía una hermana que se llamaba María, la cual sentándose á los pies de Jesús, oía su palabra.
Empero Marta se distraía en muchos servicios; y sobreviniendo, dice: Señor, ¿no tienes cuidado que mi hermana me deja servir sola? Dile pues, que me ayude.
Pero respondiendo Jesús, le dijo: Marta, Marta, cuidadosa estás, y con las muchas cosas estás turbada:
Empero una cosa es necesaria; y María escogió la buena parte, la cual no le será quitada.
En esto, juntándose muchas gentes, tanto que unos á otros se hollaban, comenzó á decir á sus discípulos, primeramente: Guardaos de la levadura de los Fariseos, que es hipocresía.
Porque nada hay encubierto, que no haya de ser descubierto; ni oculto, que no haya de ser sabido.
Por tanto, las cosas que dijisteis en tinieblas, á la luz serán oídas; y lo que hablasteis al oído en las cámaras, será pregonado en los terrados.
Mas os digo, amigos míos: No temáis de los que matan el cuerpo, y después no tienen más que hacer.
Mas os enseñaré á quién temáis: temed á aquel que después de haber quitado la vida, tiene poder de echar en la Gehenna: así os digo: á éste temed.
¿No se venden cinco pajarillos por dos blancas? pues ni uno de ellos está olvidado delante de Dios.
Y aun los cabellos de vuestra cabeza están todos contados. No temáis pues: de más estima sois que muchos pajarillos.
Y os digo que todo aquel que me confesare delante de los hombres, también el Hijo del hombre le confesará delante de los ángeles de Dios;
Mas el que me negare delante de los hombres, será negado delante de los ángeles de Dios.
Y todo aquel que dice palabra contra el Hijo del hombre, le será perdonado; mas al que blasfemare contra el Espíritu Santo, no le será perdonado.
Y cuando os trajeren á las sinagogas, y á los magistrados y potestades, no estéis solícitos cómo ó qué hayáis de responder, ó qué hayáis de decir;
Porque el Espíritu Santo os enseñará en la misma hora lo que será necesario decir.
Y díjole uno de la compañía: Maestro, di á mi hermano que parta conmigo la herencia.
Mas él le dijo: Hombre, ¿quién me puso por juez ó partidor sobre vosotros?
Y díjoles: Mirad, y guardaos de toda avaricia; porque la vida del hombre no consiste en la abundancia de los bienes que posee.
Y refirióles una parábola, diciendo: La heredad de un hombre rico había llevado mucho;
Y él pensaba dentro de sí, diciendo: ¿Qué haré, porque no tengo donde juntar mis frutos?
Y dijo: Esto haré: derribaré mis alfolíes, y los edificaré mayores, y allí juntaré todos mis frutos y mis bienes;
Y diré á mi alma: Alma, muchos bienes tienes almacenados para muchos años; repósate, come, bebe, huélgate.
Y díjole Dios: Necio, esta noche vuelven á pedir tu alma; y lo que has prevenido, ¿de quién será?
Así es el que hace para sí tesoro, y no es rico en Dios.
Y dijo á sus discípulos: Por tanto os digo: No estéis afanosos de vuestra vida, qué comeréis; ni del cuerpo, qué vestiréis.
La vida más es que la comida, y el cuerpo que el vestido.
Considerad los cuervos, que ni siembran, ni siegan; que ni tienen cillero, ni alfolí; y Dios los alimenta. ¿Cuánto de más estima sois vosotros que las aves?
¿Y quién de vosotros podrá con afán añadir á su estatura un codo?
Pues si no podéis aun lo que es menos, ¿para qué estaréis afanosos de lo demás?
Considerad los lirios, cómo crecen: no labran, ni hilan; y os digo, que ni Salomón con toda su gloria se vistió como uno de ellos.
Y si así viste Dios á la hierba, que hoy está en el campo, y mañana es echada en el horno; ¿cuánto más á vosotros, hombres de poca fe?
Vosotros, pues, no procuréis qué hayáis de comer, ó qué hayáis de beber; ni estéis en ansiosa perplejidad.
Porque todas estas cosas buscan las gentes del mundo; que vuestro Padre sabe que necesitáis estas cosas.
Mas procurad el reino de Dios, y todas estas cosas os serán añadidas.
No temáis, manada pequeña; porque al Padre ha placido daros el reino.
Vended lo que poseéis, y dad limosna; haceos bolsas que no se envejecen, tesoro en los cielos que nunca falta; donde ladrón no llega, ni polilla corrompe.
Porque donde está vuestro tesoro, allí también estará vuestro corazón.
Estén ceñidos vuestros lomos, y vuestras antorchas encendidas;
Y vosotros semejantes á hombres que esperan cuando su señor ha de volver de las bodas; para que cuando viniere y llamare, luego le abran.
Bienaventurados aquellos siervos, á los cuales cuando el Señor viniere, hallare velando: de cierto os digo, que se ceñirá, y hará que se sienten á la mesa, y pasando les servirá.
Y aunque venga á la segunda vigilia, y aunque venga á la tercera vigilia, y los hallare así, bienaventurados son los tales siervos.
Esto empero sabed, que si supiese el padre de familia á qué hora había de venir el ladrón, velaría ciertamente, y no dejaría minar su casa.
Vosotros pues también, estad apercibidos; porque á la hora que no pensáis, el Hijo del hombre vendrá.
Entonces Pedro le dijo: Señor, ¿dices esta parábola á nosotros, ó también á todos?
Y dijo el Señor: ¿Quién es el mayordomo fiel y prudente, al cual el señor pondrá sobre su familia, para que á tiempo les dé su ración?
Bienaventurado aquel siervo, al cual, cuando el señor viniere, hallare haciendo así.
En verdad os digo, que él le pondrá sobre todos sus bienes.
Mas si el tal siervo dijere en su corazón: Mi señor tarda en venir: y comenzare á herir á los siervos y á las criadas, y á comer y á beber y á embriagarse;
Vendrá el señor de aquel siervo el día que no espera, y á la hora que no sabe, y le apartará, y pondrá su parte con los infieles.
Porque el siervo que entendió la voluntad de su señor, y no se apercibió, ni hizo conforme á su voluntad, será azotado mucho.
Mas el que no entendió, é hizo cosas dignas de azotes, será azotado poco: porque á cualquiera que fué dado mucho, mucho será vuelto á demandar de él; y al que encomendaron mucho, más le será pedido.
Fuego vine á meter en la tierra: ¿y qué quiero, si ya está encendido?
Empero de bautismo me es necesario ser bautizado: y ¡cómo me angustio hasta que sea cumplido!
¿Pensáis que he venido á la tierra á dar paz? No, os digo; mas disensión.
Porque estarán de aquí adelante cinco en una casa divididos; tres contra dos, y dos contra tres.
El padre estará dividido contra el hijo, y el hijo contra el padre; la madre contra la hija, y la hija contra la madre; la suegra contra su nuera, y la nuera contra su suegra.
Y decía también á las gentes: Cuando veis la nube que sale del poniente, luego decís: Agua viene; y es así.
Y cuando sopla el austro, decís: Habrá calor; y lo hay.
¡Hipócritas! Sabéis examinar la faz del cielo y de la tierra; ¿y cómo no reconocéis este tiempo?
¿Y por qué aun de vosotros mismos no juzgáis lo que es justo?
Pues cuando vas al magistrado con tu adversario, procura en el camino librarte de él; porque no te arrastre al juez, y el juez te entregue al alguacil, y el alguacil te meta en la cárcel.
Te digo que no saldrás de allá, hasta que hayas pagado hasta el último maravedí.
Y en este mismo tiempo estaban allí unos que le contaban acerca de los Galileos, cuya sangre Pilato había mezclado con sus sacrificios.
Y respondiendo Jesús, les dijo: ¿Pensáis que estos Galileos, porque han padecido tales cosas, hayan sido más pecadores que todos los Galileos?
No, os digo; antes si no os arrepintiereis, todos pereceréis igualmente.
O aquellos dieciocho, sobre los cuales cayó la torre en Siloé, y los mató, ¿pensáis que ellos fueron más deudores que todos los hombres que habitan en Jerusalem?
No, os digo; antes si no os arrepintiereis, todos pereceréis asimismo.
Y dijo esta parábola: Tenía uno una higuera plantada en su viña, y vino á buscar fruto en ella, y no lo halló.
Y dijo al viñero: He aquí tres años ha que vengo á buscar fruto en esta higuera, y no lo hallo; córtala, ¿por qué ocupará aún la tierra?
El entonces respondiendo, le dijo: Señor, déjala aún este año, hasta que la excave, y estercole.
Y si hiciere fruto, bien; y si no, la cortarás después.
Y enseñaba en una sinagoga en sábado.
Y he aquí una mujer que tenía espíritu de enfermedad dieciocho años, y andaba agobiada, que en ninguna manera se podía enhestar.
Y como Jesús la vió, llamóla, y díjole: Mujer, libre eres de tu enfermedad.
Y puso las manos sobre ella; y luego se enderezó, y glorificaba á Dios.
Y respondiendo el príncipe de la sinagoga, enojado de que Jesús hubiese curado en sábado, dijo á la compañía: Seis días hay en que es necesario obrar: en estos, pues, venid y sed curados, y no en día de sábado.
Entonces el Señor le respondió, y dijo: Hipócrita, cada uno de vosotros ¿no desata en sábado su buey ó su asno del pesebre, y lo lleva á beber?
Y á esta hija de Abraham, que he aquí Satanás la había ligado dieciocho años, ¿no convino desatar la de esta ligadura en día de sábado?
Y diciendo estas cosas, se avergonzaban todos sus adversarios: mas todo el pueblo se gozaba de todas las cosas gloriosas que eran por él hechas.
Y dijo: ¿A qué es semejante el reino de Dios, y á qué le compararé?
Semejante es al grano de la mostaza, que tomándo lo un hombre lo metió en su huerto; y creció, y fué hecho árbol grande, y las aves del cielo hicieron nidos en sus ramas.
Y otra vez dijo: ¿A qué compararé el reino de Dios?
Semejante es á la levadura, que tomó una mujer, y la escondió en tres medidas de harina, hasta que todo hubo fermentado.
Y pasaba por todas las ciudades y aldeas, enseñando, y caminando á Jerusalem.
Y díjole uno: Señor, ¿son pocos los que se salvan? Y él les dijo:
Porfiad á entrar por la puerta angosta; porque os digo que muchos procurarán entrar, y no podrán.
Después que el padre de familia se levantare, y cerrare la puerta, y comenzareis á estar fuera, y llamar á la puerta, diciendo: Señor, Señor, ábrenos; y respondiendo os dirá: No os conozco de dónde seáis.
Entonces comenzaréis á decir: Delante de ti hemos comido y bebido, y en nuestras plazas enseñaste;
Y os dirá: Dígoos que no os conozco de dónde seáis; apartaos de mí todos los obreros de iniquidad.
Allí será el llanto y el crujir de dientes, cuando viereis á Abraham, y á Isaac, y á Jacob, y á todos los profetas en el reino de Dios, y vosotros excluídos.
Y vendrán del Oriente y del Occidente, del Norte y del Mediodía, y se sentarán á la mesa en el reino de Dios.
Y he aquí, son postreros los que eran los primeros; y son primeros los que eran los postreros.
Aquel mismo día llegaron unos de los Fariseos, diciéndole: Sal, y vete de aquí, porque Herodes te quiere matar.
Y les dijo: Id, y decid á aquella zorra: He aquí, echo fuera demonios y acabo sanidades hoy y mañana, y al tercer día soy consumado.
Empero es menester que hoy, y mañana, y pasado mañana camine; porque no es posible que profeta muera fuera de Jerusalem.
¡Jerusalem, Jerusalem! que matas á los profetas, y apedreas á los que son enviados á ti: ¡cuántas veces quise juntar tus hijos, como la gallina sus pollos debajo de sus alas, y no quisiste!
He aquí, os es dejada vuestra casa desierta: y os digo que no me veréis, hasta que venga tiempo cuando digáis: Bendito el que viene en nombre del Señor.
Y aconteció que entrando en casa de un príncipe de los Fariseos un sábado á comer pan, ellos le acechaban.
Y he aquí un hombre hidrópico estaba delante de él.
Y respondiendo Jesús, habló á los doctores de la ley y á los Fariseos, diciendo: ¿Es lícito sanar en sábado?
Y ellos callaron. Entonces él tomándole, le sanó, y despidióle.
Y respondiendo á ellos dijo: ¿El asno ó el buey de cuál de vosotros caerá en algún pozo, y no lo sacará luego en día de sábado?
Y no le podían replicar á estas cosas.
Y observando cómo escogían los primeros asientos á la mesa, propuso una parábola á los convidados, diciéndoles:
Cuando fueres convidado de alguno á bodas, no te sientes en el primer lugar, no sea que otro más honrado que tú esté por él convidado,
Y viniendo el que te llamó á ti y á él, te diga: Da lugar á éste: y entonces comiences con vergüenza á tener el lugar último.
Mas cuando fueres convidado, ve, y siéntate en el postrer lugar; porque cuando viniere el que te llamó, te diga: Amigo, sube arriba: entonces tendrás gloria delante de los que juntamente se asientan á la mesa.
Porque cualquiera que se ensalza, será humillado; y el que se humilla, será ensalzado.
Y dijo también al que le había convidado: Cuando haces comida ó cena, no llames á tus amigos, ni á tus hermanos, ni á tus parientes, ni á vecinos ricos; porque también ellos no te vuelvan á convidar, y te sea hecha compensación.
Mas cuando haces banquete, llama á los pobres, los mancos, los cojos, los ciegos;
Y serás bienaventurado; porque no te pueden retribuir; mas te será recompensado en la resurrección de los justos.
Y oyendo esto uno de los que juntamente estaban sentados á la mesa, le dijo: Bienaventurado el que comerá pan en el reino de los cielos.
El entonces le dijo: Un hombre hizo una grande cena, y convidó á muchos.
Y á la hora de la cena envió á su siervo á decir á los convidados: Venid, que ya está todo aparejado.
Y comenzaron todos á una á excusarse. El primero le dijo: He comprado una hacienda, y necesito salir y verla; te ruego que me des por excusado.
Y el otro dijo: He comprado cinco yuntas de bueyes, y voy á probarlos; ruégote que me des por excusado.
Y el otro dijo: Acabo de casarme, y por tanto no puedo ir.
Y vuelto el siervo, hizo saber estas cosas á su señor. Entonces enojado el padre de la familia, dijo á su siervo: Ve presto por las plazas y por las calles de la ciudad, y mete acá los pobres, los mancos, y cojos, y ciegos.
Y dijo el siervo: Señor, hecho es como mandaste, y aun hay lugar.
Y dijo el señor al siervo: Ve por los caminos y por los vallados, y fuérza los á entrar, para que se llene mi casa.
Porque os digo que ninguno de aquellos hombres que fueron llamados, gustará mi cena.
Y muchas gentes iban con él; y volviéndose les dijo:
Si alguno viene á mí, y no aborrece á su padre, y madre, y mujer, é hijos, y hermanos, y hermanas, y aun también su vida, no puede ser mi discípulo.
Y cualquiera que no trae su cruz, y viene en pos de mí, no puede ser mi discípulo.
Porque ¿cuál de vosotros, queriendo edificar una torre, no cuenta primero sentado los gastos, si tiene lo que necesita para acabarla?
Porque después que haya puesto el fundamento, y no pueda acabarla, todos los que lo vieren, no comiencen á hacer burla de él,
Diciendo: Este hombre comenzó á edificar, y no pudo acabar.
¿O cuál rey, habiendo de ir á hacer guerra contra otro rey, sentándose primero no consulta si puede salir al encuentro con diez mil al que viene contra él con veinte mil?
De otra manera, cuando aun el otro está lejos, le ruega por la paz, enviándo le embajada.
Así pues, cualquiera de vosotros que no renuncia á todas las cosas que posee, no puede ser mi discípulo.
Buena es la sal; mas si aun la sal fuere desvanecida, ¿con qué se adobará?
Ni para la tierra, ni para el muladar es buena; fuera la arrojan. Quien tiene oídos para oir, oiga.
Y se llegaban á él todos los publicanos y pecadores á oirle.
Y murmuraban los Fariseos y los escribas, diciendo: Este á los pecadores recibe, y con ellos come.
Y él les propuso esta parábola, diciendo:
¿Qué hombre de vosotros, teniendo cien ovejas, si perdiere una de ellas, no deja las noventa y nueve en el desierto, y va á la que se perdió, hasta que la halle?
Y hallada, la pone sobre sus hombros gozoso;
Y viniendo á casa, junta á los amigos y á los vecinos, diciéndoles: Dadme el parabién, porque he hallado mi oveja que se había perdido.
Os digo, que así habrá más gozo en el cielo de un pecador que se arrepiente, que de noventa y nueve justos, que no necesitan arrepentimiento.
¿O qué mujer que tiene diez dracmas, si perdiere una dracma, no enciende el candil, y barre la casa, y busca con diligencia hasta hallarla?
Y cuando la hubiere hallado, junta las amigas y las vecinas, diciendo: Dadme el parabién, porque he hallado la dracma que había perdido.
Así os digo que hay gozo delante de los ángeles de Dios por un pecador que se arrepiente.
Y dijo: Un hombre tenía dos hijos;
Y el menor de ellos dijo á su padre: Padre, dame la parte de la hacienda que me pertenece: y les repartió la hacienda.
Y no muchos días después, juntándolo todo el hijo menor, partió lejos á una provincia apartada; y allí desperdició su hacienda viviendo perdidamente.
Y cuando todo lo hubo malgastado, vino una grande hambre en aquella provincia, y comenzóle á faltar.
Y fué y se llegó á uno de los ciudadanos de aquella tierra, el cual le envió á su hacienda para que apacentase los puercos.
Y deseaba henchir su vientre de las algarrobas que comían los puercos; mas nadie se las daba.
Y volviendo en sí, dijo: ¡Cuántos jornaleros en casa de mi padre tienen abundancia de pan, y yo aquí perezco de hambre!
Me levantaré, é iré á mi padre, y le diré: Padre, he pecado contra el cielo, y contra ti;
Ya no soy digno de ser llamado tu hijo; hazme como á uno de tus jornaleros.
Y levantándose, vino á su padre. Y como aun estuviese lejos, viólo su padre, y fué movido á misericordia, y corrió, y echóse sobre su cuello, y besóle.
Y el hijo le dijo: Padre, he pecado contra el cielo, y contra ti, y ya no soy digno de ser llamado tu hijo.
Mas el padre dijo á sus siervos: Sacad el principal vestido, y vestidle; y poned un anillo en su mano, y zapatos en sus pies.
Y traed el becerro grueso, y matadlo, y comamos, y hagamos fiesta:
Porque este mi hijo muerto era, y ha revivido; habíase perdido, y es hallado. Y comenzaron á regocijarse.
Y su hijo el mayor estaba en el campo; el cual como vino, y llegó cerca de casa, oyó la sinfonía y las danzas;
Y llamando á uno de los criados, preguntóle qué era aquello.
Y él le dijo: Tu hermano ha venido; y tu padre ha muerto el becerro grueso, por haberle recibido salvo.
Entonces se enojó, y no quería entrar. Salió por tanto su padre, y le rogaba que entrase.
Mas él respondiendo, dijo al padre: He aquí tantos años te sirvo, no habiendo traspasado jamás tu mandamiento, y nunca me has dado un cabrito para gozarme con mis amigos:
Mas cuando vino éste tu hijo, que ha consumido tu hacienda con rameras, has matado para él el becerro grueso.
El entonces le dijo: Hijo, tú siempre estás conmigo, y todas mis cosas son tuyas.
Mas era menester hacer fiesta y holgar nos, porque este tu hermano muerto era, y ha revivido; habíase perdido, y es hallado.
Y Á SUS discípulos dice: Imposible es que no vengan escándalos; mas ¡ay de aquél por quien vienen!
Mejor le fuera, si le pusiesen al cuello una piedra de molino, y le lanzasen en el mar, que escandalizar á uno de estos pequeñitos.
Mirad por vosotros: si pecare contra ti tu hermano, repréndele; y si se arrepintiere, perdónale.
Y si siete veces al día pecare contra ti, y siete veces al día se volviere á ti, diciendo, pésame, perdónale.
Y dijeron los apóstoles al Señor: Auméntanos la fe.
Entonces el Señor dijo: Si tuvieseis fe como un grano de mostaza, diréis á este sicómoro: Desarráigate, y plántate en el mar; y os obedecerá.
¿Y quién de vosotros tiene un siervo que ara ó apacienta, que vuelto del campo le diga luego: Pasa, siéntate á la mesa?
¿No le dice antes: Adereza qué cene, y arremángate, y sírveme hasta que haya comido y bebido; y después de esto, come tú y bebe?
¿Da gracias al siervo porque hizo lo que le había sido mandado? Pienso que no.
Así también vosotros, cuando hubiereis hecho todo lo que os es mandado, decid: Siervos inútiles somos, porque lo que debíamos hacer, hicimos.
Y aconteció que yendo él á Jerusalem, pasaba por medio de Samaria y de Galilea.
Y entrando en una aldea, viniéronle al encuentro diez hombres leprosos, los cuales se pararon de lejos,
Y alzaron la voz, diciendo: Jesús, Maestro, ten misericordia de nosotros.
Y como él los vió, les dijo: Id, mostraos á los sacerdotes. Y aconteció, que yendo ellos, fueron limpios.
Entonces uno de ellos, como se vió que estaba limpio, volvió, glorificando á Dios á gran voz;
Y derribóse sobre el rostro á sus pies, dándole gracias: y éste era Samaritano.
Y respondiendo Jesús, dijo: ¿No son diez los que fueron limpios? ¿Y los nueve dónde están?
¿No hubo quien volviese y diese gloria á Dios sino este extranjero?
Y díjole: Levántate, vete; tu fe te ha salvado.
Y preguntado por los Fariseos, cuándo había de venir el reino de Dios, les respondió y dijo: El reino de Dios no vendrá con advertencia;
Ni dirán: Helo aquí, ó helo allí: porque he aquí el reino de Dios entre vosotros está.
Y dijo á sus discípulos: Tiempo vendrá, cuando desearéis ver uno de los días del Hijo del hombre, y no lo veréis.
Y os dirán: Helo aquí, ó helo allí. No vayáis, ni sigáis.
Porque como el relámpago, relampagueando desde una parte de debajo del cielo, resplandece hasta la otra debajo del cielo, así también será el Hijo del hombre en su día.
Mas primero es necesario que padezca mucho, y sea reprobado de esta generación.
Y como fué en los días de Noé, así también será en los días del Hijo del hombre.
Comían, bebían, los hombres tomaban mujeres, y las mujeres maridos, hasta el día que entró Noé en el arca; y vino el diluvio, y destruyó á todos.
Asimismo también como fué en los días de Lot; comían, bebían, compraban, vendían, plantaban, edificaban;
Mas el día que Lot salió de Sodoma, llovió del cielo fuego y azufre, y destruyó á todos:
Como esto será el día en que el Hijo del hombre se manifestará.
En aquel día, el que estuviere en el terrado, y sus alhajas en casa, no descienda á tomarlas: y el que en el campo, asimismo no vuelva atrás.
Acordaos de la mujer de Lot.
Cualquiera que procurare salvar su vida, la perderá; y cualquiera que la perdiere, la salvará.
Os digo que en aquella noche estarán dos en una cama; el uno será tomado, y el otro será dejado.
Dos mujeres estarán moliendo juntas: la una será tomada, y la otra dejada.
Y respondiendo, le dicen: ¿Dónde, Señor? Y él les dijo: Donde estuviere el cuerpo, allá se juntarán también las águilas.
Y propúsoles también una parábola sobre que es necesario orar siempre, y no desmayar,
Diciendo: Había un juez en una ciudad, el cual ni temía á Dios, ni respetaba á hombre.
Había también en aquella ciudad una viuda, la cual venía á él diciendo: Hazme justicia de mi adversario.
Pero él no quiso por algún tiempo; mas después de esto dijo dentro de sí: Aunque ni temo á Dios, ni tengo respeto á hombre,
Todavía, porque esta viuda me es molesta, le haré justicia, porque al fin no venga y me muela.
Y dijo el Señor: Oid lo que dice el juez injusto.
¿Y Dios no hará justicia á sus escogidos, que claman á él día y noche, aunque sea longánime acerca de ellos?
Os digo que los defenderá presto. Empero cuando el Hijo del hombre viniere, ¿hallará fe en la tierra?
Y dijo también á unos que confiaban de sí como justos, y menospreciaban á los otros, esta parábola:
Dos hombres subieron al templo á orar: el uno Fariseo, el otro publicano.
El Fariseo, en pie, oraba consigo de esta manera: Dios, te doy gracias, que no soy como los otros hombres, ladrones, injustos, adúlteros, ni aun como este publicano;
Ayuno dos veces á la semana, doy diezmos de todo lo que poseo.
Mas el publicano estando lejos no quería ni aun alzar los ojos al cielo, sino que hería su pecho, diciendo: Dios, sé propicio á mí pecador.
Os digo que éste descendió á su casa justificado antes que el otro; porque cualquiera que se ensalza, será humillado; y el que se humilla, será ensalzado.
Y traían á él los niños para que los tocase; lo cual viendo los discípulos les reñían.
Mas Jesús llamándolos, dijo: Dejad los niños venir á mí, y no los impidáis; porque de tales es el reino de Dios.
De cierto os digo, que cualquiera que no recibiere el reino de Dios como un niño, no entrará en él.
Y preguntóle un príncipe, diciendo: Maestro bueno, ¿qué haré para poseer la vida eterna?
Y Jesús le dijo: ¿Por qué me llamas bueno? ninguno hay bueno sino sólo Dios.
Los mandamientos sabes: No matarás: No adulterarás: No hurtarás: No dirás falso testimonio: Honra á tu padre y á tu madre.
Y él dijo: Todas estas cosas he guardado desde mi juventud.
Y Jesús, oído esto, le dijo: Aun te falta una cosa: vende todo lo que tienes, y da á los pobres, y tendrás tesoro en el cielo; y ven, sígueme.
Entonces él, oídas estas cosas, se puso muy triste, porque era muy rico.
Y viendo Jesús que se había entristecido mucho, dijo: ¡Cuán dificultosamente entrarán en el reino de Dios los que tienen riquezas!
Porque más fácil cosa es entrar un camello por el ojo de una aguja, que un rico entrar en el reino de Dios.
Y los que lo oían, dijeron: ¿Y quién podrá ser salvo?
Y él les dijo: Lo que es imposible para con los hombres, posible es para Dios.
Entonces Pedro dijo: He aquí, nosotros hemos dejado las posesiones nuestras, y te hemos seguido.
Y él les dijo: De cierto os digo, que nadie hay que haya dejado casa, padres, ó hermanos, ó mujer, ó hijos, por el reino de Dios,
Que no haya de recibir mucho más en este tiempo, y en el siglo venidero la vida eterna.
Y Jesús, tomando á los doce, les dijo: He aquí subimos á Jerusalem, y serán cumplidas todas las cosas que fueron escritas por los profetas, del Hijo del hombre.
Porque será entregado á las gentes, y será escarnecido, é injuriado, y escupido.
Y después que le hubieren azotado, le matarán: mas al tercer día resucitará.
Pero ellos nada de estas cosas entendían, y esta palabra les era encubierta, y no entendían lo que se decía.
Y aconteció que acercándose él á Jericó, un ciego estaba sentado junto al camino mendigando;
El cual como oyó la gente que pasaba, preguntó qué era aquello.
Y dijéronle que pasaba Jesús Nazareno.
Entonces dió voces, diciendo: Jesús, Hijo de David, ten misericordia de mí.
Y los que iban delante, le reñían que callase; mas él clamaba mucho más: Hijo de David, ten misericordia de mí.
Jesús entonces parándose, mandó traerle á sí: y como él llegó, le preguntó,
Diciendo: ¿Qué quieres que te haga? Y él dijo: Señor, que vea.
Y Jesús le dijo: Ve, tu fe te ha hecho salvo.
Y luego vió, y le seguía, glorificando á Dios: y todo el pueblo como lo vió, dió á Dios alabanza.
Y habiendo entrado Jesús, iba pasando por Jericó;
Y he aquí un varón llamado Zaqueo, el cual era el principal de los publicanos, y era rico;
Y procuraba ver á Jesús quién fuese; mas no podía á causa de la multitud, porque era pequeño de estatura.
Y corriendo delante, subióse á un árbol sicómoro para verle; porque había de pasar por allí.
Y como vino á aquel lugar Jesús, mirando, le vió, y díjole: Zaqueo, date priesa, desciende, porque hoy es necesario que pose en tu casa.
Entonces él descendió apriesa, y le recibió gozoso.
Y viendo esto, todos murmuraban, diciendo que había entrado á posar con un hombre pecador.
Entonces Zaqueo, puesto en pie, dijo al Señor: He aquí, Señor, la mitad de mis bienes doy á los pobres; y si en algo he defraudado á alguno, lo vuelvo con el cuatro tanto.
Y Jesús le dijo: Hoy ha venido la salvación á esta casa; por cuanto él también es hijo de Abraham.
Porque el Hijo del hombre vino á buscar y á salvar lo que se había perdido.
Y oyendo ellos estas cosas, prosiguió Jesús y dijo una parábola, por cuanto estaba cerca de Jerusalem, y porque pensaban que luego había de ser manifestado el reino de Dios.
Dijo pues: Un hombre noble partió á una provincia lejos, para tomar para sí un reino, y volver.
Mas llamados diez siervos suyos, les dió diez minas, y díjoles: Negociad entre tanto que vengo.
Empero sus ciudadanos le aborrecían, y enviaron tras de él una embajada, diciendo: No queremos que éste reine sobre nosotros.
Y aconteció, que vuelto él, habiendo tomado el reino, mandó llamar á sí á aquellos siervos á los cuales había dado el dinero, para saber lo que había negociado cada uno.
Y vino el primero, diciendo: Señor, tu mina ha ganado diez minas.
Y él le dice: Está bien, buen siervo; pues que en lo poco has sido fiel, tendrás potestad sobre diez ciudades.
Y vino otro, diciendo: Señor, tu mina ha hecho cinco minas.
Y también á éste dijo: Tú también sé sobre cinco ciudades.
Y vino otro, diciendo: Señor, he aquí tu mina, la cual he tenido guardada en un pañizuelo:
Porque tuve miedo de ti, que eres hombre recio; tomas lo que no pusiste, y siegas lo que no sembraste.
Entonces él le dijo: Mal siervo, de tu boca te juzgo. Sabías que yo era hombre recio, que tomo lo que no puse, y que siego lo que no sembré;
¿Por qué, pues, no diste mi dinero al banco, y yo viniendo lo demandara con el logro?
Y dijo á los que estaban presentes: Quitadle la mina, y dadla al que tiene las diez minas.
Y ellos le dijeron: Señor, tiene diez minas.
Pues yo os digo que á cualquiera que tuviere, le será dado; mas al que no tuviere, aun lo que tiene le será quitado.
Y también á aquellos mis enemigos que no querían que yo reinase sobre ellos, traedlos acá, y degolladlos delante de mí.
Y dicho esto, iba delante subiendo á Jerusalem.
Y aconteció, que llegando cerca de Bethfagé, y de Bethania, al monte que se llama de las Olivas, envió dos de sus discípulos,
Diciendo: Id á la aldea de enfrente; en la cual como entrareis, hallaréis un pollino atado, en el que ningún hombre se ha sentado jamás; desatadlo, y traedlo.
Y si alguien os preguntare, ¿por qué lo desatáis? le responderéis así: Porque el Señor lo ha menester.
Y fueron los que habían sido enviados, y hallaron como les dijo.
Y desatando ellos el pollino, sus dueños les dijeron: ¿Por qué desatáis el pollino?
Y ellos dijeron: Porque el Señor lo ha menester.
Y trajéronlo á Jesús; y habiendo echado sus vestidos sobre el pollino, pusieron á Jesús encima.
Y yendo él tendían sus capas por el camino.
Y como llegasen ya cerca de la bajada del monte de las Olivas, toda la multitud de los discípulos, gozándose, comenzaron á alabar á Dios á gran voz por todas las maravillas que habían visto,
Diciendo: ¡Bendito el rey que viene en el nombre del Señor: paz en el cielo, y gloria en lo altísimo!
Entonces algunos de los Fariseos de la compañía, le dijeron: Maestro, reprende á tus discípulos.
Y él respondiendo, les dijo: Os digo que si éstos callaren, las piedras clamarán.
Y como llegó cerca, viendo la ciudad, lloró sobre ella,
Diciendo: ¡Oh si también tú conocieses, á lo menos en este tu día, lo que toca á tu paz! mas ahora está encubierto de tus ojos.
Porque vendrán días sobre ti, que tus enemigos te cercarán con baluarte, y te pondrán cerco, y de todas partes te pondrán en estrecho,
Y te derribarán á tierra, y á tus hijos dentro de ti; y no dejarán sobre ti piedra sobre piedra; por cuanto no conociste el tiempo de tu visitación.
Y entrando en el templo, comenzó á echar fuera á todos los que vendían y compraban en él.
Diciéndoles: Escrito está: Mi casa, casa de oración es; mas vosotros la habéis hecho cueva de ladrones.
Y enseñaba cada día en el templo; mas los príncipes de los sacerdotes, y los escribas, y los principales del pueblo procuraban matarle.
Y no hallaban qué hacerle, porque todo el pueblo estaba suspenso oyéndole.
Y aconteció un día, que enseñando él al pueblo en el templo, y anunciando el evangelio, llegáronse los príncipes de los sacerdotes y los escribas, con los ancianos;
Y le hablaron, diciendo: Dinos: ¿con qué potestad haces estas cosas? ¿ó quién es el que te ha dado esta potestad?
Respondiendo entonces Jesús, les dijo: Os preguntaré yo también una palabra; respondedme:
El bautismo de Juan, ¿era del cielo, ó de los hombres?
Mas ellos pensaban dentro de sí, diciendo: Si dijéremos, del cielo, dirá: ¿Por qué, pues, no le creísteis?
Y si dijéremos, de los hombres, todo el pueblo nos apedreará: porque están ciertos que Juan era profeta.
Y respondieron que no sabían de dónde.
Entonces Jesús les dijo: Ni yo os digo con qué potestad hago estas cosas.
Y comenzó á decir al pueblo esta parábola: Un hombre plantó una viña, y arrendóla á labradores, y se ausentó por mucho tiempo.
Y al tiempo, envió un siervo á los labradores, para que le diesen del fruto de la viña; mas los labradores le hirieron, y enviaron vacío.
Y volvió á enviar otro siervo; mas ellos á éste también, herido y afrentado, le enviaron vacío.
Y volvió á enviar al tercer siervo; mas ellos también á éste echaron herido.
Entonces el señor de la viña dijo: ¿Qué haré? Enviaré mi hijo amado: quizás cuando á éste vieren, tendrán respeto.
Mas los labradores, viéndole, pensaron entre sí, diciendo: Este es el heredero; venid, matémosle para que la heredad sea nuestra.
Y echáronle fuera de la viña, y le mataron. ¿Qué pues, les hará el señor de la viña?
Vendrá, y destruirá á estos labradores, y dará su viña á otros. Y como ellos lo oyeron, dijeron: ¡Dios nos libre!
Mas él mirándolos, dice: ¿Qué pues es lo que está escrito: La piedra que condenaron los edificadores, ésta fué por cabeza de esquina?
Cualquiera que cayere sobre aquella piedra, será quebrantado; mas sobre el que la piedra cayere, le desmenuzará.
Y procuraban los príncipes de los sacerdotes y los escribas echarle mano en aquella hora, porque entendieron que contra ellos había dicho esta parábola: mas temieron al pueblo.
Y acechándole enviaron espías que se simulasen justos, para sorprenderle en palabras, para que le entregasen al principado y á la potestad del presidente.
Los cuales le preguntaron, diciendo: Maestro, sabemos que dices y enseñas bien, y que no tienes respeto á persona; antes enseñas el camino de Dios con verdad.
¿Nos es lícito dar tributo á César, ó no?
Mas él, entendiendo la astucia de ellos, les dijo: ¿Por qué me tentáis?
Mostradme la moneda. ¿De quién tiene la imagen y la inscripción? Y respondiendo dijeron: De César.
Entonces les dijo: Pues dad á César lo que es de César; y lo que es de Dios, á Dios.
Y no pudieron reprender sus palabras delante del pueblo: antes maravillados de su respuesta, callaron.
Y llegándose unos de los Saduceos, los cuales niegan haber resurrección, le preguntaron,
Diciendo: Maestro, Moisés nos escribió: Si el hermano de alguno muriere teniendo mujer, y muriere sin hijos, que su hermano tome la mujer, y levante simiente á su hermano.
Fueron, pues, siete hermanos: y el primero tomó mujer, y murió sin hijos.
Y la tomó el segundo, el cual también murió sin hijos.
Y la tomó el tercero: asimismo también todos siete: y murieron sin dejar prole.
Y á la postre de todos murió también la mujer.
En la resurrección, pues, ¿mujer de cuál de ellos será? porque los siete la tuvieron por mujer.
Entonces respondiendo Jesús, les dijo: Los hijos de este siglo se casan, y son dados en casamiento:
Mas los que fueren tenidos por dignos de aquel siglo y de la resurrección de los muertos, ni se casan, ni son dados en casamiento:
Porque no pueden ya más morir: porque son iguales á los ángeles, y son hijos de Dios, cuando son hijos de la resurrección.
Y que los muertos hayan de resucitar, aun Moisés lo enseñó en el pasaje de la zarza, cuando llama al Señor: Dios de Abraham, y Dios de Isaac, y Dios de Jacob.
Porque Dios no es Dios de muertos, mas de vivos: porque todos viven á él.
Y respondiéndole unos de los escribas, dijeron: Maestro, bien has dicho.
Y no osaron más preguntarle algo.
Y él les dijo: ¿Cómo dicen que el Cristo es hijo de David?
Y el mismo David dice en el libro de los Salmos: Dijo el Señor á mi Señor: Siéntate á mi diestra,
Entre tanto que pongo tus enemigos por estrado de tus pies.
Así que David le llama Señor: ¿cómo pues es su hijo?
Y oyéndole todo el pueblo, dijo á sus discípulos:
Guardaos de los escribas, que quieren andar con ropas largas, y aman las salutaciones en las plazas, y las primeras sillas en las sinagogas, y los primeros asientos en las cenas;
Que devoran las casas de las viudas, poniendo por pretexto la larga oración: éstos recibirán mayor condenación.
Y estaba cerca el día de la fiesta de los ázimos, que se llama la Pascua.
Y los príncipes de los sacerdotes y los escribas buscaban cómo le matarían; mas tenían miedo del pueblo.
Y entró Satanás en Judas, por sobrenombre Iscariote, el cual era uno del número de los doce;
Y fué, y habló con los príncipes de los sacerdotes, y con los magistrados, de cómo se lo entregaría.
Los cuales se holgaron, y concertaron de darle dinero.
Y prometió, y buscaba oportunidad para entregarle á ellos sin bulla.
Y vino el día de los ázimos, en el cual era necesario matar la pascua.
Y envió á Pedro y á Juan, diciendo: Id, aparejadnos la pascua para que comamos.
Y ellos le dijeron: ¿Dónde quieres que aparejemos?
Y él les dijo: He aquí cuando entrareis en la ciudad, os encontrará un hombre que lleva un cántaro de agua: seguidle hasta la casa donde entrare,
Y decid al padre de la familia de la casa: El Maestro te dice: ¿Dónde está el aposento donde tengo de comer la pascua con mis discípulos?
Entonces él os mostrará un gran cenáculo aderezado; aparejad allí.
Fueron pues, y hallaron como les había dicho; y aparejaron la pascua.
Y como fué hora, sentóse á la mesa, y con él los apóstoles.
Y les dijo: En gran manera he deseado comer con vosotros esta pascua antes que padezca;
Porque os digo que no comeré más de ella, hasta que se cumpla en el reino de Dios.
Y tomando el vaso, habiendo dado gracias, dijo: Tomad esto, y partidlo entre vosotros;
Porque os digo, que no beberé más del fruto de la vid, hasta que el reino de Dios venga.
Y tomando el pan, habiendo dado gracias, partió, y les dió, diciendo: Esto es mi cuerpo, que por vosotros es dado: haced esto en memoria de mí.
Asimismo también el vaso, después que hubo cenado, diciendo: Este vaso es el nuevo pacto en mi sangre, que por vosotros se derrama.
Con todo eso, he aquí la mano del que me entrega, conmigo en la mesa.
Y á la verdad el Hijo del hombre va, según lo que está determinado; empero ¡ay de aquel hombre por el cual es entregado!
Ellos entonces comenzaron á preguntar entre sí, cuál de ellos sería el que había de hacer esto.
Y hubo entre ellos una contienda, quién de ellos parecía ser el mayor.
Entonces él les dijo: Los reyes de las gentes se enseñorean de ellas; y los que sobre ellas tienen potestad, son llamados bienhechores:
Mas vosotros, no así: antes el que es mayor entre vosotros, sea como el más mozo; y el que es príncipe, como el que sirve.
Porque, ¿cuál es mayor, el que se sienta á la mesa, ó el que sirve? ¿No es el que se sienta á la mesa? Y yo soy entre vosotros como el que sirve.
Empero vosotros sois los que habéis permanecido conmigo en mis tentaciones:
Yo pues os ordeno un reino, como mi Padre me lo ordenó á mí,
Para que comáis y bebáis en mi mesa en mi reino, y os sentéis sobre tronos juzgando á las doce tribus de Israel.
Dijo también el Señor: Simón, Simón, he aquí Satanás os ha pedido para zarandaros como á trigo;
Mas yo he rogado por ti que tu fe no falte: y tú, una vez vuelto, confirma á tus hermanos.
Y él le dijo: Señor, pronto estoy á ir contigo aun á cárcel y á muerte.
Y él dijo: Pedro, te digo que el gallo no cantará hoy antes que tú niegues tres veces que me conoces.
Y á ellos dijo: Cuando os envié sin bolsa, y sin alforja, y sin zapatos, ¿os faltó algo? Y ellos dijeron: Nada.
Y les dijo: Pues ahora, el que tiene bolsa, tómela, y también la alforja, y el que no tiene, venda su capa y compre espada.
Porque os digo, que es necesario que se cumpla todavía en mí aquello que está escrito: Y con los malos fué contado: porque lo que está escrito de mí, cumplimiento tiene.
Entonces ellos dijeron: Señor, he aquí dos espadas. Y él les dijo: Basta.
Y saliendo, se fué, como solía, al monte de las Olivas; y sus discípulos también le siguieron.
Y como llegó á aquel lugar, les dijo: Orad que no entréis en tentación.
Y él se apartó de ellos como un tiro de piedra; y puesto de rodillas oró,
Diciendo: Padre, si quieres, pasa este vaso de mí; empero no se haga mi voluntad, sino la tuya.
Y le apareció un ángel del cielo confortándole.
Y estando en agonía, oraba más intensamente: y fué su sudor como grandes gotas de sangre que caían hasta la tierra.
Y como se levantó de la oración, y vino á sus discípulos, hallólos durmiendo de tristeza;
Y les dijo: ¿Por qué dormís? Levantaos, y orad que no entréis en tentación.
Estando él aún hablando, he aquí una turba; y el que se llamaba Judas, uno de los doce, iba delante de ellos; y llegóse á Jesús para besarlo.
Entonces Jesús le dijo: Judas, ¿con beso entregas al Hijo del hombre?
Y viendo los que estaban con él lo que había de ser, le dijeron: Señor, ¿heriremos á cuchillo?
Y uno de ellos hirió á un siervo del príncipe de los sacerdotes, y le quitó la oreja derecha.
Entonces respondiendo Jesús, dijo: Dejad hasta aquí. Y tocando su oreja, le sanó.
Y Jesús dijo á los que habían venido á él, los príncipes de los sacerdotes, y los magistrados del templo, y los ancianos: ¿Como á ladrón habéis salido con espadas y con palos?
Habiendo estado con vosotros cada día en el templo, no extendisteis las manos contra mí; mas ésta es vuestra hora, y la potestad de las tinieblas.
Y prendiéndole trajéronle, y metiéronle en casa del príncipe de los sacerdotes. Y Pedro le seguía de lejos.
Y habiendo encendido fuego en medio de la sala, y sentándose todos alrededor, se sentó también Pedro entre ellos.
Y como una criada le vió que estaba sentado al fuego, fijóse en él, y dijo: Y éste con él estaba.
Entonces él lo negó, diciendo: Mujer, no le conozco.
Y un poco después, viéndole otro, dijo: Y tú de ellos eras. Y Pedro dijo: Hombre, no soy.
Y como una hora pasada otro afirmaba, diciendo: Verdaderamente también éste estaba con él, porque es Galileo.
Y Pedro dijo: Hombre, no sé qué dices. Y luego, estando él aún hablando, el gallo cantó.
Entonces, vuelto el Señor, miró á Pedro: y Pedro se acordó de la palabra del Señor como le había dicho: Antes que el gallo cante, me negarás tres veces.
Y saliendo fuera Pedro, lloró amargamente.
Y los hombres que tenían á Jesús, se burlaban de él hiriéndole;
Y cubriéndole, herían su rostro, y preguntábanle, diciendo: Profetiza quién es el que te hirió.
Y decían otras muchas cosas injuriándole.
Y cuando fué de día, se juntaron los ancianos del pueblo, y los príncipes de los sacerdotes, y los escribas, y le trajeron á su concilio,
Diciendo: ¿Eres tú el Cristo? dínos lo. Y les dijo: Si os lo dijere, no creeréis;
Y también si os preguntare, no me responderéis, ni me soltaréis:
Mas después de ahora el Hijo del hombre se asentará á la diestra de la potencia de Dios.
Y dijeron todos: ¿Luego tú eres Hijo de Dios? Y él les dijo: Vosotros decís que yo soy.
Entonces ellos dijeron: ¿Qué más testimonio deseamos? porque nosotros lo hemos oído de su boca.
Levantándose entonces toda la multitud de ellos, lleváronle á Pilato.
Y comenzaron á acusarle, diciendo: A éste hemos hallado que pervierte la nación, y que veda dar tributo á César, diciendo que él es el Cristo, el rey.
Entonces Pilato le preguntó, diciendo: ¿Eres tú el Rey de los Judíos? Y respondiéndole él, dijo: Tú lo dices.
Y Pilato dijo á los príncipes de los sacerdotes, y á las gentes: Ninguna culpa hallo en este hombre.
Mas ellos porfiaban, diciendo: Alborota al pueblo, enseñando por toda Judea, comenzando desde Galilea hasta aquí.
Entonces Pilato, oyendo de Galilea, preguntó si el hombre era Galileo.
Y como entendió que era de la jurisdicción de Herodes, le remitió á Herodes, el cual también estaba en Jerusalem en aquellos días.
Y Herodes, viendo á Jesús, holgóse mucho, porque hacía mucho que deseaba verle; porque había oído de él muchas cosas, y tenía esperanza que le vería hacer alguna señal.
Y le preguntaba con muchas palabras; mas él nada le respondió:
Y estaban los príncipes de los sacerdotes y los escribas acusándole con gran porfía.
Mas Herodes con su corte le menospreció, y escarneció, vistiéndole de una ropa rica; y volvióle á enviar á Pilato.
Y fueron hechos amigos entre sí Pilato y Herodes en el mismo día; porque antes eran enemigos entre sí.
Entonces Pilato, convocando los príncipes de los sacerdotes, y los magistrados, y el pueblo,
Les dijo: Me habéis presentado á éste por hombre que desvía al pueblo: y he aquí, preguntando yo delante de vosotros, no he hallado culpa alguna en este hombre de aquéllas de que le acusáis.
Y ni aun Herodes; porque os remití á él, y he aquí, ninguna cosa digna de muerte ha hecho.
Le soltaré, pues, castigado.
Y tenía necesidad de soltarles uno en cada fiesta.
Mas toda la multitud dió voces á una, diciendo: Quita á éste, y suéltanos á Barrabás:
(El cual había sido echado en la cárcel por una sedición hecha en la ciudad, y una muerte.)
Y hablóles otra vez Pilato, queriendo soltar á Jesús.
Pero ellos volvieron á dar voces, diciendo: Crucifícale, crucifícale.
Y él les dijo la tercera vez: ¿Pues qué mal ha hecho éste? Ninguna culpa de muerte he hallado en él: le castigaré, pues, y le soltaré.
Mas ellos instaban á grandes voces, pidiendo que fuese crucificado. Y las voces de ellos y de los príncipes de los sacerdotes crecían.
Entonces Pilato juzgó que se hiciese lo que ellos pedían;
Y les soltó á aquél que había sido echado en la cárcel por sedición y una muerte, al cual habían pedido; y entregó á Jesús á la voluntad de ellos.
Y llevándole, tomaron á un Simón Cireneo, que venía del campo, y le pusieron encima la cruz para que la llevase tras Jesús.
Y le seguía una grande multitud de pueblo, y de mujeres, las cuales le lloraban y lamentaban.
Mas Jesús, vuelto á ellas, les dice: Hijas de Jerusalem, no me lloréis á mí, mas llorad por vosotras mismas, y por vuestros hijos.
Porque he aquí vendrán días en que dirán: Bienaventuradas las estériles, y los vientres que no engendraron, y los pechos que no criaron.
Entonces comenzarán á decir á los montes: Caed sobre nosotros: y á los collados: Cubridnos.
Porque si en el árbol verde hacen estas cosas, ¿en el seco, qué se hará?
Y llevaban también con él otros dos, malhechores, á ser muertos.
Y como vinieron al lugar que se llama de la Calavera, le crucificaron allí, y á los malhechores, uno á la derecha, y otro á la izquierda.
Y Jesús decía: Padre, perdónalos, porque no saben lo que hacen. Y partiendo sus vestidos, echaron suertes.
Y el pueblo estaba mirando; y se burlaban de él los príncipes con ellos, diciendo: A otros hizo salvos: sálvese á sí, si éste es el Mesías, el escogido de Dios.
Escarnecían de él también los soldados, llegándose y presentándole vinagre,
Y diciendo: Si tú eres el Rey de los Judíos, sálvate á ti mismo.
Y había también sobre él un título escrito con letras griegas, y latinas, y hebraicas: ESTE ES EL REY DE LOS JUDIOS.
Y uno de los malhechores que estaban colgados, le injuriaba, diciendo: Si tú eres el Cristo, sálvate á ti mismo y á nosotros.
Y respondiendo el otro, reprendióle, diciendo: ¿Ni aun tú temes á Dios, estando en la misma condenación?
Y nosotros, á la verdad, justamente padecemos; porque recibimos lo que merecieron nuestros hechos: mas éste ningún mal hizo.
Y dijo á Jesús: Acuérdate de mí cuando vinieres á tu reino.
Entonces Jesús le dijo: De cierto te digo, que hoy estarás conmigo en el paraíso.
Y cuando era como la hora de sexta, fueron hechas tinieblas sobre toda la tierra hasta la hora de nona.
Y el sol se obscureció: y el velo del templo se rompió por medio.
Entonces Jesús, clamando á gran voz, dijo: Padre, en tus manos encomiendo mi espíritu. Y habiendo dicho esto, espiró.
Y como el centurión vió lo que había acontecido, dió gloria á Dios, diciendo: Verdaderamente este hombre era justo.
Y toda la multitud de los que estaban presentes á este espectáculo, viendo lo que había acontecido, se volvían hiriendo sus pechos.
Mas todos sus conocidos, y las mujeres que le habían seguido desde Galilea, estaban lejos mirando estas cosas.
Y he aquí un varón llamado José, el cual era senador, varón bueno y justo,
(El cual no había consentido en el consejo ni en los hechos de ellos), de Arimatea, ciudad de la Judea, el cual también esperaba el reino de Dios;
Este llegó á Pilato, y pidió el cuerpo de Jesús.
Y quitado, lo envolvió en una sábana, y le puso en un sepulcro abierto en una peña, en el cual ninguno había aún sido puesto.
Y era día de la víspera de la Pascua; y estaba para rayar el sábado.
Y las mujeres que con él habían venido de Galilea, siguieron también y vieron el sepulcro, y cómo fué puesto su cuerpo.
Y vueltas, aparejaron drogas aromáticas y ungüentos; y reposaron el sábado, conforme al mandamiento.
Y el primer día de la semana, muy de mañana, vinieron al sepulcro, trayendo las drogas aromáticas que habían aparejado, y algunas otras mujeres con ellas.
Y hallaron la piedra revuelta del sepulcro.
Y entrando, no hallaron el cuerpo del Señor Jesús.
Y aconteció, que estando ellas espantadas de esto, he aquí se pararon junto á ellas dos varones con vestiduras resplandecientes;
Y como tuviesen ellas temor, y bajasen el rostro á tierra, les dijeron: ¿Por qué buscáis entre los muertos al que vive?
No está aquí, mas ha resucitado: acordaos de lo que os habló, cuando aun estaba en Galilea,
Diciendo: Es menester que el Hijo del hombre sea entregado en manos de hombres pecadores, y que sea crucificado, y resucite al tercer día.
Entonces ellas se acordaron de sus palabras,
Y volviendo del sepulcro, dieron nuevas de todas estas cosas á los once, y á todos los demás.
Y eran María Magdalena, y Juana, y María madre de Jacobo, y las demás con ellas, las que dijeron estas cosas á los apóstoles.
Mas á ellos les parecían como locura las palabras de ellas, y no las creyeron.
Pero levantándose Pedro, corrió al sepulcro: y como miró dentro, vió solos los lienzos echados; y se fué maravillándose de lo que había sucedido.
Y he aquí, dos de ellos iban el mismo día á una aldea que estaba de Jerusalem sesenta estadios, llamada Emmaús.
E iban hablando entre sí de todas aquellas cosas que habían acaecido.
Y aconteció que yendo hablando entre sí, y preguntándose el uno al otro, el mismo Jesús se llegó, é iba con ellos juntamente.
Mas los ojos de ellos estaban embargados, para que no le conociesen.
Y díjoles: ¿Qué pláticas son estas que tratáis entre vosotros andando, y estáis tristes?
Y respondiendo el uno, que se llamaba Cleofas, le dijo: ¿Tú sólo peregrino eres en Jerusalem, y no has sabido las cosas que en ella han acontecido estos días?
Entonces él les dijo: ¿Qué cosas? Y ellos le dijeron: De Jesús Nazareno, el cual fué varón profeta, poderoso en obra y en palabra delante de Dios y de todo el pueblo;
Y cómo le entregaron los príncipes de los sacerdotes y nuestros príncipes á condenación de muerte, y le crucificaron.
Mas nosotros esperábamos que él era el que había de redimir á Israel: y ahora sobre todo esto, hoy es el tercer día que esto ha acontecido.
Aunque también unas mujeres de los nuestros nos han espantado, las cuales antes del día fueron al sepulcro:
Y no hallando su cuerpo, vinieron diciendo que también habían visto visión de ángeles, los cuales dijeron que él vive.
Y fueron algunos de los nuestros al sepulcro, y hallaron así como las mujeres habían dicho; mas á él no le vieron.
Entonces él les dijo: ¡Oh insensatos, y tardos de corazón para creer todo lo que los profetas han dicho!
¿No era necesario que el Cristo padeciera estas cosas, y que entrara en su gloria?
Y comenzando desde Moisés, y de todos los profetas, declarábales en todas las Escrituras lo que de él decían.
Y llegaron á la aldea á donde iban: y él hizo como que iba más lejos.
Mas ellos le detuvieron por fuerza, diciendo: Quédate con nosotros, porque se hace tarde, y el día ya ha declinado. Entró pues á estarse con ellos.
Y aconteció, que estando sentado con ellos á la mesa, tomando el pan, bendijo, y partió, y dióles.
Entonces fueron abiertos los ojos de ellos, y le conocieron; mas él se desapareció de los ojos de ellos.
Y decían el uno al otro: ¿No ardía nuestro corazón en nosotros, mientras nos hablaba en el camino, y cuando nos abría las Escrituras?
Y levantándose en la misma hora, tornáronse á Jerusalem, y hallaron á los once reunidos, y á los que estaban con ellos.
Que decían: Ha resucitado el Señor verdaderamente, y ha aparecido á Simón.
Entonces ellos contaban las cosas que les habían acontecido en el camino, y cómo había sido conocido de ellos al partir el pan.
Y entre tanto que ellos hablaban estas cosas, él se puso en medio de ellos, y les dijo: Paz á vosotros.
Entonces ellos espantados y asombrados, pensaban que veían espíritu.
Mas él les dice: ¿Por qué estáis turbados, y suben pensamientos á vuestros corazones?
Mirad mis manos y mis pies, que yo mismo soy: palpad, y ved; que el espíritu ni tiene carne ni huesos, como veis que yo tengo.
Y en diciendo esto, les mostró las manos y los pies.
Y no creyéndolo aún ellos de gozo, y maravillados, díjoles: ¿Tenéis aquí algo de comer?
Entonces ellos le presentaron parte de un pez asado, y un panal de miel.
Y él tomó, y comió delante de ellos.
Y él les dijo: Estas son las palabras que os hablé, estando aún con vosotros: que era necesario que se cumpliesen todas las cosas que están escritas de mí en la ley de Moisés, y en los profetas, y en los salmos.
Entonces les abrió el sentido, para que entendiesen las Escrituras;
Y díjoles: Así está escrito, y así fué necesario que el Cristo padeciese, y resucitase de los muertos al tercer día;
Y que se predicase en su nombre el arrepentimiento y la remisión de pecados en todas las naciones, comenzando de Jerusalem.
Y vosotros sois testigos de estas cosas.
Y he aquí, yo enviaré la promesa de mi Padre sobre vosotros: mas vosotros asentad en la ciudad de Jerusalem, hasta que seáis investidos de potencia de lo alto.
Y sacólos fuera hasta Bethania, y alzando sus manos, los bendijo.
Y aconteció que bendiciéndolos, se fué de ellos; y era llevado arriba al cielo.
Y ellos, después de haberle adorado, se volvieron á Jerusalem con gran gozo;
Y estaban siempre en el templo, alabando y bendiciendo á Dios. Amén.
En el principio era el Verbo, y el Verbo era con Dios, y el Verbo era Dios.
Este era en el principio con Dios.
Todas las cosas por él fueron hechas; y sin él nada de lo que es hecho, fué hecho.
En él estaba la vida, y la vida era la luz de los hombres.
Y la luz en las tinieblas resplandece; mas las tinieblas no la comprendieron.
Fué un hombre enviado de Dios, el cual se llamaba Juan.
Este vino por testimonio, para que diese testimonio de la luz, para que todos creyesen por él.
No era él la luz, sino para que diese testimonio de la luz.
Aquél era la luz verdadera, que alumbra á todo hombre que viene á este mundo.
En el mundo estaba, y el mundo fué hecho por él; y el mundo no le conoció.
A lo suyo vino, y los suyos no le recibieron.
Mas á todos los que le recibieron, dióles potestad de ser hechos hijos de Dios, á los que creen en su nombre:
Los cuales no son engendrados de sangre, ni de voluntad de carne, ni de voluntad de varón, mas de Dios.
Y aquel Verbo fué hecho carne, y habitó entre nosotros (y vimos su gloria, gloria como del unigénito del Padre), lleno de gracia y de verdad.
Juan dió testimonio de él, y clamó diciendo: Este es del que yo decía: El que viene tras mí, es antes de mí: porque es primero que yo.
Porque de su plenitud tomamos todos, y gracia por gracia.
Porque la ley por Moisés fué dada: mas la gracia y la verdad por Jesucristo fué hecha.
A Dios nadie le vió jamás: el unigénito Hijo, que está en el seno del Padre, él le declaró.
Y éste es el testimonio de Juan, cuando los Judíos enviaron de Jerusalem sacerdotes y Levitas, que le preguntasen: ¿Tú, quién eres?
Y confesó, y no negó; mas declaró: No soy yo el Cristo.
Y le preguntaron: ¿Qué pues? ¿Eres tú Elías? Dijo: No soy. ¿Eres tú el profeta? Y respondió: No.
Dijéronle: ¿Pues quién eres? para que demos respuesta á los que nos enviaron. ¿Qué dices de ti mismo?
Dijo: Yo soy la voz del que clama en el desierto: Enderezad el camino del Señor, como dijo Isaías profeta.
Y los que habían sido enviados eran de los Fariseos.
Y preguntáronle, y dijéronle: ¿Por qué pues bautizas, si tú no eres el Cristo, ni Elías, ni el profeta?
Y Juan les respondió, diciendo: Yo bautizo con agua; mas en medio de vosotros ha estado á quien vosotros no conocéis.
Este es el que ha de venir tras mí, el cual es antes de mí: del cual yo no soy digno de desatar la correa del zapato.
Estas cosas acontecieron en Betábara, de la otra parte del Jordán, donde Juan bautizaba.
El siguiente día ve Juan á Jesús que venía á él, y dice: He aquí el Cordero de Dios, que quita el pecado del mundo.
Este es del que dije: Tras mí viene un varón, el cual es antes de mí: porque era primero que yo.
Y yo no le conocía; más para que fuese manifestado á Israel, por eso vine yo bautizando con agua.
Y Juan dió testimonio, diciendo: Vi al Espíritu que descendía del cielo como paloma, y reposó sobre él.
Y yo no le conocía; mas el que me envió á bautizar con agua, aquél me dijo: Sobre quien vieres descender el Espíritu, y que reposa sobre él, éste es el que bautiza con Espíritu Santo.
Y yo le vi, y he dado testimonio que éste es el Hijo de Dios.
El siguiente día otra vez estaba Juan, y dos de sus discípulos.
Y mirando á Jesús que andaba por allí, dijo: He aquí el Cordero de Dios.
Y oyéronle los dos discípulos hablar, y siguieron á Jesús.
Y volviéndose Jesús, y viéndolos seguir le, díceles: ¿Qué buscáis? Y ellos le dijeron: Rabbí (que declarado quiere decir Maestro) ¿dónde moras?
Díceles: Venid y ved. Vinieron, y vieron donde moraba, y quedáronse con él aquel día: porque era como la hora de las diez.
Era Andrés, hermano de Simón Pedro, uno de los dos que habían oído de Juan, y le habían seguido.
Este halló primero á su hermano Simón, y díjole: Hemos hallado al Mesías (que declarado es, el Cristo).
Y le trajo á Jesús. Y mirándole Jesús, dijo: Tú eres Simón, hijo de Jonás: tú serás llamado Cephas (que quiere decir, Piedra).
El siguiente día quiso Jesús ir á Galilea, y halla á Felipe, al cual dijo: Sígueme.
Y era Felipe de Bethsaida, la ciudad de Andrés y de Pedro.
Felipe halló á Natanael, y dícele: Hemos hallado á aquel de quien escribió Moisés en la ley, y los profetas: á Jesús, el hijo de José, de Nazaret.
Y díjole Natanael: ¿De Nazaret puede haber algo de bueno? Dícele Felipe: Ven y ve.
Jesús vió venir á sí á Natanael, y dijo de él: He aquí un verdadero Israelita, en el cual no hay engaño.
Dícele Natanael: ¿De dónde me conoces? Respondió Jesús, y díjole: Antes que Felipe te llamara, cuando estabas debajo de la higuera te vi.
Respondió Natanael, y díjole: Rabbí, tú eres el Hijo de Dios; tú eres el Rey de Israel.
Respondió Jesús y díjole: ¿Porque te dije, te vi debajo de la higuera, crees? cosas mayores que éstas verás.
Y dícele: De cierto, de cierto os digo: De aquí adelante veréis el cielo abierto, y los ángeles de Dios que suben y descienden sobre el Hijo del hombre.
Y había un hombre de los Fariseos que se llamaba Nicodemo, príncipe de los Judíos.
Este vino á Jesús de noche, y díjole: Rabbí, sabemos que has venido de Dios por maestro; porque nadie puede hacer estas señales que tú haces, si no fuere Dios con él.
Respondió Jesús, y díjole: De cierto, de cierto te digo, que el que no naciere otra vez, no puede ver el reino de Dios.
Dícele Nicodemo: ¿Cómo puede el hombre nacer siendo viejo? ¿puede entrar otra vez en el vientre de su madre, y nacer?
Respondió Jesús: De cierto, de cierto te digo, que el que no naciere de agua y del Espíritu, no puede entrar en el reino de Dios.
Lo que es nacido de la carne, carne es; y lo que es nacido del Espíritu, espíritu es.
No te maravilles de que te dije: Os es necesario nacer otra vez.
El viento de donde quiere sopla, y oyes su sonido; mas ni sabes de dónde viene, ni á dónde vaya: así es todo aquel que es nacido del Espíritu.
Respondió Nicodemo, y díjole: ¿Cómo puede esto hacerse?
Respondió Jesús, y díjole: ¿Tú eres el maestro de Israel, y no sabes esto?
De cierto, de cierto te digo, que lo que sabemos hablamos, y lo que hemos visto, testificamos; y no recibís nuestro testimonio.
Si os he dicho cosas terrenas, y no creéis, ¿cómo creeréis si os dijere las celestiales?
Y nadie subió al cielo, sino el que descendió del cielo, el Hijo del hombre, que está en el cielo.
Y como Moisés levantó la serpiente en el desierto, así es necesario que el Hijo del hombre sea levantado;
Para que todo aquel que en él creyere, no se pierda, sino que tenga vida eterna.
Porque de tal manera amó Dios al mundo, que ha dado á su Hijo unigénito, para que todo aquel que en él cree, no se pierda, mas tenga vida eterna.
Porque no envió Dios á su Hijo al mundo para que condene al mundo, mas para que el mundo sea salvo por él.
El que en él cree, no es condenado; mas el que no cree, ya es condenado, porque no creyó en el nombre del unigénito Hijo de Dios.
Y esta es la condenación: porque la luz vino al mundo, y los hombres amaron más las tinieblas que la luz; porque sus obras eran malas.
Porque todo aquel que hace lo malo, aborrece la luz y no viene á la luz, porque sus obras no sean redargüidas.
Mas el que obra verdad, viene á la luz, para que sus obras sean manifestadas que son hechas en Dios.
Pasado esto, vino Jesús con sus discípulos á la tierra de Judea; y estaba allí con ellos, y bautizaba.
Y bautizaba también Juan en Enón junto á Salim, porque había allí muchas aguas; y venían, y eran bautizados.
Porque Juan no había sido aún puesto en la carcel.
Y hubo cuestión entre los discípulos de Juan y los Judíos acerca de la purificación.
Y vinieron á Juan, y dijéronle: Rabbí, el que estaba contigo de la otra parte del Jordán, del cual tú diste testimonio, he aquí bautiza, y todos vienen á él.
Respondió Juan, y dijo: No puede el hombre recibir algo, si no le fuere dado del cielo.
Vosotros mismos me sois testigos que dije: Yo no soy el Cristo, sino que soy enviado delante de él.
El que tiene la esposa, es el esposo; mas el amigo del esposo, que está en pie y le oye, se goza grandemente de la voz del esposo; así pues, este mi gozo es cumplido.
A él conviene crecer, mas á mí menguar.
El que de arriba viene, sobre todos es: el que es de la tierra, terreno es, y cosas terrenas habla: el que viene del cielo, sobre todos es.
Y lo que vió y oyó, esto testifica: y nadie recibe su testimonio.
El que recibe su testimonio, éste signó que Dios es verdadero.
Porque el que Dios envió, las palabras de Dios habla: porque no da Dios el Espíritu por medida.
El Padre ama al Hijo, y todas las cosas dió en su mano.
El que cree en el Hijo, tiene vida eterna; mas el que es incrédulo al Hijo, no verá la vida, sino que la ira de Dios está sobre él.
De manera que como Jesús entendió que los Fariseos habían oído que Jesús hacía y bautizaba más discípulos que Juan,
(Aunque Jesús no bautizaba, sino sus discípulos),
Dejó á Judea, y fuése otra vez á Galilea.
Y era menester que pasase por Samaria.
Vino, pues, á una ciudad de Samaria que se llamaba Sichâr, junto á la heredad que Jacob dió á José su hijo.
Y estaba allí la fuente de Jacob. Pues Jesús, cansado del camino, así se sentó á la fuente. Era como la hora de sexta.
Vino una mujer de Samaria á sacar agua: y Jesús le dice: Dame de beber.
(Porque sus discípulos habían ido á la ciudad á comprar de comer.)
Y la mujer Samaritana le dice: ¿Cómo tú, siendo Judío, me pides á mí de beber, que soy mujer Samaritana? porque los Judíos no se tratan con los Samaritanos.
Respondió Jesús y díjole: Si conocieses el don de Dios, y quién es el que te dice: Dame de beber: tú pedirías de él, y él te daría agua viva.
La mujer le dice: Señor, no tienes con qué sacar la, y el pozo es hondo: ¿de dónde, pues, tienes el agua viva?
¿Eres tú mayor que nuestro padre Jacob, que nos dió este pozo, del cual él bebió, y sus hijos, y sus ganados?
Respondió Jesús y díjole: Cualquiera que bebiere de esta agua, volverá á tener sed;
Mas el que bebiere del agua que yo le daré, para siempre no tendrá sed: mas el agua que yo le daré, será en él una fuente de agua que salte para vida eterna.
La mujer le dice: Señor, dame esta agua, para que no tenga sed, ni venga acá á sacar la.
Jesús le dice: Ve, llama á tu marido, y ven acá.
Respondió la mujer, y dijo: No tengo marido. Dícele Jesús: Bien has dicho, No tengo marido;
Porque cinco maridos has tenido: y el que ahora tienes no es tu marido; esto has dicho con verdad.
Dícele la mujer: Señor, paréceme que tú eres profeta.
Nuestros padres adoraron en este monte, y vosotros decís que en Jerusalem es el lugar donde es necesario adorar.
Dícele Jesús: Mujer, créeme, que la hora viene, cuando ni en este monte, ni en Jerusalem adoraréis al Padre.
Vosotros adoráis lo que no sabéis; nosotros adoramos lo que sabemos: porque la salud viene de los Judíos.
Mas la hora viene, y ahora es, cuando los verdaderos adoradores adorarán al Padre en espíritu y en verdad; porque también el Padre tales adoradores busca que le adoren.
Dios es Espíritu; y los que le adoran, en espíritu y en verdad es necesario que adoren.
Dícele la mujer: Sé que el Mesías ha de venir, el cual se dice el Cristo: cuando él viniere nos declarará todas las cosas.
Dícele Jesús: Yo soy, que hablo contigo.
Y en esto vinieron sus discípulos, y maravilláronse de que hablaba con mujer; mas ninguno dijo: ¿Qué preguntas? ó, ¿Qué hablas con ella?
Entonces la mujer dejó su cántaro, y fué á la ciudad, y dijo á aquellos hombres:
Venid, ved un hombre que me ha dicho todo lo que he hecho: ¿si quizás es éste el Cristo?
Entonces salieron de la ciudad, y vinieron á él.
Entre tanto los discípulos le rogaban, diciendo: Rabbí, come.
Y él les dijo: Yo tengo una comida que comer, que vosotros no sabéis.
Entonces los discípulos decían el uno al otro: ¿Si le habrá traído alguien de comer?
Díceles Jesús: Mi comida es que haga la voluntad del que me envió, y que acabe su obra.
¿No decís vosotros: Aun hay cuatro meses hasta que llegue la siega? He aquí os digo: Alzad vuestros ojos, y mirad las regiones, porque ya están blancas para la siega.
Y el que siega, recibe salario, y allega fruto para vida eterna; para que el que siembra también goce, y el que siega.
Porque en esto es el dicho verdadero: Que uno es el que siembra, y otro es el que siega.
Yo os he enviado á segar lo que vosotros no labrasteis: otros labraron, y vosotros habéis entrado en sus labores.
Y muchos de los Samaritanos de aquella ciudad creyeron en él por la palabra de la mujer, que daba testimonio, diciendo: Que me dijo todo lo que he hecho.
Viniendo pues los Samaritanos á él, rogáronle que se quedase allí: y se quedó allí dos días.
Y creyeron muchos más por la palabra de él.
Y decían á la mujer: Ya no creemos por tu dicho; porque nosotros mismos hemos oído, y sabemos que verdaderamente éste es el Salvador del mundo, el Cristo.
Y dos días después, salió de allí, y fuése á Galilea.
Porque el mismo Jesús dió testimonio de que el profeta en su tierra no tiene honra.
Y como vino á Galilea, los Galileos le recibieron, vistas todas las cosas que había hecho en Jerusalem en el día de la fiesta: porque también ellos habían ido á la fiesta.
Vino pues Jesús otra vez á Caná de Galilea, donde había hecho el vino del agua. Y había en Capernaum uno del rey, cuyo hijo estaba enfermo.
Este, como oyó que Jesús venía de Judea á Galilea, fué á él, y rogábale que descendiese, y sanase á su hijo, porque se comenzaba á morir.
Entonces Jesús le dijo: Si no viereis señales y milagros no creeréis.
El del rey le dijo: Señor, desciende antes que mi hijo muera.
Dícele Jesús: Ve, tu hijo vive. Y el hombre creyó á la palabra que Jesús le dijo, y se fué.
Y cuando ya él descendía, los siervos le salieron á recibir, y le dieron nuevas, diciendo: Tu hijo vive.
Entonces él les preguntó á qué hora comenzó á estar mejor. Y dijéronle: Ayer á las siete le dejó la fiebre.
El padre entonces entendió, que aquella hora era cuando Jesús le dijo: Tu hijo vive; y creyó él y toda su casa.
Esta segunda señal volvió Jesús á hacer, cuando vino de Judea á Galilea.
Después de estas cosas, era un día de fiesta de los Judíos, y subió Jesús á Jerusalem.
Y hay en Jerusalem á la puerta del ganado un estanque, que en hebraico es llamado Bethesda, el cual tiene cinco portales.
En éstos yacía multitud de enfermos, ciegos, cojos, secos, que estaban esperando el movimiento del agua.
Porque un ángel descendía á cierto tiempo al estanque, y revolvía el agua; y el que primero descendía en el estanque después del movimiento del agua, era sano de cualquier enfermedad que tuviese.
Y estaba allí un hombre que había treinta y ocho años que estaba enfermo.
Como Jesús vió á éste echado, y entendió que ya había mucho tiempo, dícele: ¿Quieres ser sano?
Señor, le respondió el enfermo, no tengo hombre que me meta en el estanque cuando el agua fuere revuelta; porque entre tanto que yo vengo, otro antes de mí ha descendido.
Dícele Jesús: Levántate, toma tu lecho, y anda.
Y luego aquel hombre fué sano, y tomó su lecho, é íbase. Y era sábado aquel día.
Entonces los Judíos decían á aquel que había sido sanado: Sábado es: no te es lícito llevar tu lecho.
Respondióles: El que me sanó, él mismo me dijo: Toma tu lecho y anda.
Preguntáronle entonces: ¿Quién es el que te dijo: Toma tu lecho y anda?
Y el que había sido sanado, no sabía quién fuese; porque Jesús se había apartado de la gente que estaba en aquel lugar.
Después le halló Jesús en el templo, y díjole: He aquí, has sido sanado; no peques más, porque no te venga alguna cosa peor.
El se fué, y dió aviso á los Judíos, que Jesús era el que le había sanado.
Y por esta causa los Judíos perseguían á Jesús, y procuraban matarle, porque hacía estas cosas en sábado.
Y Jesús les respondió: Mi Padre hasta ahora obra, y yo obro.
Entonces, por tanto, más procuraban los Judíos matarle, porque no sólo quebrantaba el sábado, sino que también á su Padre llamaba Dios, haciéndose igual á Dios.
Respondió entonces Jesús, y díjoles: De cierto, de cierto os digo: No puede el Hijo hacer nada de sí mismo, sino lo que viere hacer al Padre: porque todo lo que él hace, esto también hace el Hijo juntamente.
Porque el Padre ama al Hijo, y le muestra todas las cosas que él hace; y mayores obras que éstas le mostrará, de suerte que vosotros os maravilléis.
Porque como el Padre levanta los muertos, y les da vida, así también el Hijo á los que quiere da vida.
Porque el Padre á nadie juzga, mas todo el juicio dió al Hijo;
Para que todos honren al Hijo como honran al Padre. El que no honra al Hijo, no honra al Padre que le envió.
De cierto, de cierto os digo: El que oye mi palabra, y cree al que me ha enviado, tiene vida eterna; y no vendrá á condenación, mas pasó de muerte á vida.
De cierto, de cierto os digo: Vendrá hora, y ahora es, cuando los muertos oirán la voz del Hijo de Dios: y los que oyeren vivirán.
Porque como el Padre tiene vida en sí mismo, así dió también al Hijo que tuviese vida en sí mismo:
Y también le dió poder de hacer juicio, en cuanto es el Hijo del hombre.
No os maravilléis de esto; porque vendrá hora, cuando todos los que están en los sepulcros oirán su voz;
Y los que hicieron bien, saldrán á resurrección de vida; mas los que hicieron mal, á resurrección de condenación.
No puedo yo de mí mismo hacer nada: como oigo, juzgo: y mi juicio es justo; porque no busco mi voluntad, mas la voluntad del que me envió, del Padre.
Si yo doy testimonio de mí mismo, mi testimonio no es verdadero.
Otro es el que da testimonio de mí; y sé que el testimonio que da de mí, es verdadero.
Vosotros enviasteis á Juan, y él dió testimonio á la verdad.
Empero yo no tomo el testimonio de hombre; mas digo esto, para que vosotros seáis salvos.
El era antorcha que ardía y alumbraba: y vosotros quisisteis recrearos por un poco á su luz.
Mas yo tengo mayor testimonio que el de Juan: porque las obras que el Padre me dió que cumpliese, las mismas obras que yo hago, dan testimonio de mí, que el Padre me haya enviado.
Y el que me envió, el Padre, él ha dado testimonio de mí. Ni nunca habéis oído su voz, ni habéis visto su parecer.
Ni tenéis su palabra permanente en vosotros; porque al que él envió, á éste vosotros no creéis.
Escudriñad las Escrituras, porque á vosotros os parece que en ellas tenéis la vida eterna; y ellas son las que dan testimonio de mí.
Y no queréis venir á mí, para que tengáis vida.
Gloria de los hombres no recibo.
Mas yo os conozco, que no tenéis amor de Dios en vosotros.
Yo he venido en nombre de mi Padre, y no me recibís: si otro viniere en su propio nombre, á aquél recibiréis.
¿Cómo podéis vosotros creer, pues tomáis la gloria los unos de los otros, y no buscáis la gloria que de sólo Dios viene?
No penséis que yo os tengo de acusar delante del Padre; hay quien os acusa, Moisés, en quien vosotros esperáis.
Porque si vosotros creyeseis á Moisés, creeríais á mí; porque de mí escribió él.
Y si á sus escritos no creéis, ¿cómo creeréis á mis palabras?
Pasadas estas cosas, fuése Jesús de la otra parte de la mar de Galilea, que es de Tiberias.
Y seguíale grande multitud, porque veían sus señales que hacía en los enfermos.
Y subió Jesús á un monte, y se sentó allí con sus discípulos.
Y estaba cerca la Pascua, la fiesta de los Judíos.
Y como alzó Jesús los ojos, y vió que había venido á él grande multitud, dice á Felipe: ¿De dónde compraremos pan para que coman éstos?
Mas esto decía para probarle; porque él sabía lo que había de hacer.
Respondióle Felipe: Doscientos denarios de pan no les bastarán, para que cada uno de ellos tome un poco.
Dícele uno de sus discípulos, Andrés, hermano de Simón Pedro:
Un muchacho está aquí que tiene cinco panes de cebada y dos pececillos; ¿mas qué es esto entre tantos?
Entonces Jesús dijo: Haced recostar la gente. Y había mucha hierba en aquel lugar: y recostáronse como número de cinco mil varones.
Y tomó Jesús aquellos panes, y habiendo dado gracias, repartió á los discípulos, y los discípulos á los que estaban recostados: asimismo de los peces, cuanto querían.
Y como fueron saciados, dijo á sus discípulos: Recoged los pedazos que han quedado, porque no se pierda nada.
Cogieron pues, é hinchieron doce cestas de pedazos de los cinco panes de cebada, que sobraron á los que habían comido.
Aquellos hombres entonces, como vieron la señal que Jesús había hecho, decían: Este verdaderamente es el profeta que había de venir al mundo.
Y entendiendo Jesús que habían de venir para arrebatarle, y hacerle rey, volvió á retirarse al monte, él solo.
Y como se hizo tarde, descendieron sus discípulos á la mar;
Y entrando en un barco, venían de la otra parte de la mar hacia Capernaum. Y era ya oscuro, y Jesús no había venido á ellos.
Y levantábase la mar con un gran viento que soplaba.
Y como hubieron navegado como veinticinco ó treinta estadios, ven á Jesús que andaba sobre la mar, y se acercaba al barco: y tuvieron miedo.
Mas él les dijo: Yo soy; no tengáis miedo.
Ellos entonces gustaron recibirle en el barco: y luego el barco llegó á la tierra donde iban.
El día siguiente, la gente que estaba de la otra parte de la mar, como vió que no había allí otra navecilla sino una, y que Jesús no había entrado con sus discípulos en ella, sino que sus discípulos se habían ido solos;
Y que otras navecillas habían arribado de Tiberias junto al lugar donde habían comido el pan después de haber el Señor dado gracias;
Como vió pues la gente que Jesús no estaba allí, ni sus discípulos, entraron ellos en las navecillas, y vinieron á Capernaum buscando á Jesús.
Y hallándole de la otra parte de la mar, dijéronle: Rabbí, ¿cuándo llegaste acá?
Respondióles Jesús, y dijo: De cierto, de cierto os digo, que me buscáis, no porque habéis visto las señales, sino porque comisteis el pan y os hartasteis.
Trabajad no por la comida que perece, mas por la comida que á vida eterna permanece, la cual el Hijo del hombre os dará: porque á éste señaló el Padre, que es Dios.
Y dijéronle: ¿Qué haremos para que obremos las obras de Dios?
Respondió Jesús, y díjoles: Esta es la obra de Dios, que creáis en el que él ha enviado.
Dijéronle entonces: ¿Qué señal pues haces tú, para que veamos, y te creamos? ¿Qué obras?
Nuestros padres comieron el maná en el desierto, como está escrito: Pan del cielo les dió á comer.
Y Jesús les dijo: De cierto, de cierto os digo: No os dió Moisés pan del cielo; mas mi Padre os da el verdadero pan del cielo.
Porque el pan de Dios es aquel que descendió del cielo y da vida al mundo.
Y dijéronle: Señor, danos siempre este pan.
Y Jesús les dijo: Yo soy el pan de vida: el que á mí viene, nunca tendrá hambre; y el que en mí cree, no tendrá sed jamás.
Mas os he dicho, que aunque me habéis visto, no creéis.
Todo lo que el Padre me da, vendrá á mí; y al que á mí viene, no le hecho fuera.
Porque he descendido del cielo, no para hacer mi voluntad, mas la voluntad del que me envió.
Y esta es la voluntad del que me envió, del Padre: Que todo lo que me diere, no pierda de ello, sino que lo resucite en el día postrero.
Y esta es la voluntad del que me ha enviado: Que todo aquel que ve al Hijo, y cree en él, tenga vida eterna: y yo le resucitaré en el día postrero.
Murmuraban entonces de él los Judíos, porque había dicho: Yo soy el pan que descendí del cielo.
Y decían: ¿No es éste Jesús, el hijo de José, cuyo padre y madre nosotros conocemos? ¿cómo, pues, dice éste: Del cielo he descendido?
Y Jesús respondió, y díjoles: No murmuréis entre vosotros.
Ninguno puede venir á mí, si el Padre que me envió no le trajere; y yo le resucitaré en el día postrero.
Escrito está en los profetas: Y serán todos enseñados de Dios. Así que, todo aquel que oyó del Padre, y aprendió, viene á mí.
No que alguno haya visto al Padre, sino aquel que vino de Dios, éste ha visto al Padre.
De cierto, de cierto os digo: El que cree en mí, tiene vida eterna.
Yo soy el pan de vida.
Vuestros padres comieron el maná en el desierto, y son muertos.
Este es el pan que desciende del cielo, para que el que de él comiere, no muera.
Yo soy el pan vivo que he descendido del cielo: si alguno comiere de este pan, vivirá para siempre; y el pan que yo daré es mi carne, la cual yo daré por la vida del mundo.
Entonces los Judíos contendían entre sí, diciendo: ¿Cómo puede éste darnos su carne á comer?
Y Jesús les dijo: De cierto, de cierto os digo: Si no comiereis la carne del Hijo del hombre, y bebiereis su sangre, no tendréis vida en vosotros.
El que come mi carne y bebe mi sangre, tiene vida eterna: y yo le resucitaré en el día postrero.
Porque mi carne es verdadera comida, y mi sangre es verdadera bebida.
El que come mi carne y bebe mi sangre, en mí permanece, y yo en él.
Como me envió el Padre viviente, y yo vivo por el Padre, asimismo el que me come, él también vivirá por mí.
Este es el pan que descendió del cielo: no como vuestros padres comieron el maná, y son muertos: el que come de este pan, vivirá eternamente.
Estas cosas dijo en la sinagoga, enseñando en Capernaum.
Y muchos de sus discípulos oyéndo lo, dijeron: Dura es esta palabra: ¿quién la puede oir?
Y sabiendo Jesús en sí mismo que sus discípulos murmuraban de esto, díjoles: ¿Esto os escandaliza?
¿Pues qué, si viereis al Hijo del hombre que sube donde estaba primero?
El espíritu es el que da vida; la carne nada aprovecha: las palabras que yo os he hablado, son espíritu, y son vida.
Mas hay algunos de vosotros que no creen. Porque Jesús desde el principio sabía quiénes eran los que no creían, y quién le había de entregar.
Y dijo: Por eso os he dicho que ninguno puede venir á mí, si no le fuere dado del Padre.
Desde esto, muchos de sus discípulos volvieron atrás, y ya no andaban con él.
Dijo entonces Jesús á los doce: ¿Queréis vosotros iros también?
Y respondióle Simón Pedro: Señor, ¿á quién iremos? tú tienes palabras de vida eterna.
Y nosotros creemos y conocemos que tú eres el Cristo, el Hijo de Dios viviente.
Jesús le respondió: ¿No he escogido yo á vosotros doce, y uno de vosotros es diablo?
Y hablaba de Judas Iscariote, hijo de Simón, porque éste era el que le había de entregar, el cual era uno de los doce.
Y jesús se fué al monte de las Olivas.
Y por la mañana volvió al templo, y todo el pueblo vino á él: y sentado él, los enseñaba.
Entonces los escribas y los Fariseos le traen una mujer tomada en adulterio; y poniéndola en medio,
Dícenle: Maestro, esta mujer ha sido tomada en el mismo hecho, adulterando;
Y en la ley Moisés nos mandó apedrear á las tales: tú pues, ¿qué dices?
Mas esto decían tentándole, para poder acusarle. Empero Jesús, inclinado hacia abajo, escribía en tierra con el dedo.
Y como perseverasen preguntándole, enderezóse, y díjoles: El que de vosotros esté sin pecado, arroje contra ella la piedra el primero.
Y volviéndose á inclinar hacia abajo, escribía en tierra.
Oyendo, pues, ellos, redargüidos de la conciencia, salíanse uno á uno, comenzando desde los más viejos hasta los postreros: y quedó solo Jesús, y la mujer que estaba en medio.
Y enderezándose Jesús, y no viendo á nadie más que á la mujer, díjole: ¿Mujer, dónde están los que te acusaban? ¿Ninguno te ha condenado?
Y ella dijo: Señor, ninguno. Entonces Jesús le dijo: Ni yo te condeno: vete, y no peques más.
Y hablóles Jesús otra vez, diciendo: Yo soy la luz del mundo: el que me sigue, no andará en tinieblas, mas tendrá la lumbre de la vida.
Entonces los Fariseos le dijeron: Tú de ti mismo das testimonio: tu testimonio no es verdadero.
Respondió Jesús, y díjoles: Aunque yo doy testimonio de mí mismo, mi testimonio es verdadero, porque sé de dónde he venido y á dónde voy; mas vosotros no sabéis de dónde vengo, y á dónde voy.
Vosotros según la carne juzgáis; mas yo no juzgo á nadie.
Y si yo juzgo, mi juicio es verdadero; porque no soy solo, sino yo y el que me envió, el Padre.
Y en vuestra ley está escrito que el testimonio de dos hombres es verdadero.
Yo soy el que doy testimonio de mí mismo: y da testimonio de mí el que me envió, el Padre.
Y decíanle: ¿Dónde está tu Padre? Respondió Jesús: Ni á mí me conocéis, ni á mi Padre; si á mí me conocieseis, á mi Padre también conocierais.
Estas palabras habló Jesús en el lugar de las limosnas, enseñando en el templo: y nadie le prendió; porque aun no había venido su hora.
Y díjoles otra vez Jesús: Yo me voy, y me buscaréis, mas en vuestro pecado moriréis: á donde yo voy, vosotros no podéis venir.
Decían entonces los Judíos: ¿Hase de matar á sí mismo, que dice: A donde yo voy, vosotros no podéis venir?
Y decíales: Vosotros sois de abajo, yo soy de arriba; vosotros sois de este mundo, yo no soy de este mundo.
Por eso os dije que moriréis en vuestros pecados; porque si no creyereis que yo soy, en vuestros pecados moriréis.
Y decíanle: ¿Tú quién eres? Entonces Jesús les dijo: El que al principio también os he dicho.
Muchas cosas tengo que decir y juzgar de vosotros: mas el que me envió, es verdadero: y yo, lo que he oído de él, esto hablo en el mundo.
Mas no entendieron que él les hablaba del Padre.
Díjoles pues, Jesús: Cuando levantareis al Hijo del hombre, entonces entenderéis que yo soy, y que nada hago de mí mismo; mas como el Padre me enseñó, esto hablo.
Porque el que me envió, conmigo está; no me ha dejado solo el Padre; porque yo, lo que á él agrada, hago siempre.
Hablando él estas cosas, muchos creyeron en él.
Y decía Jesús á los Judíos que le habían creído: Si vosotros permaneciereis en mi palabra, seréis verdaderamente mis discípulos;
Y conoceréis la verdad, y la verdad os libertará.
Y respondiéronle: Simiente de Abraham somos, y jamás servimos á nadie: ¿cómo dices tú: Seréis libres?
Jesús les respondió: De cierto, de cierto os digo, que todo aquel que hace pecado, es siervo de pecado.
Y el siervo no queda en casa para siempre: el hijo queda para siempre.
Así que, si el Hijo os libertare, seréis verdaderamente libres.
Sé que sois simiente de Abraham, mas procuráis matarme, porque mi palabra no cabe en vosotros.
Yo hablo lo que he visto cerca del Padre; y vosotros hacéis lo que habéis oído cerca de vuestro padre.
Respondieron y dijéronle: Nuestro padre es Abraham. Díceles Jesús: Si fuerais hijos de Abraham, las obras de Abraham haríais.
Empero ahora procuráis matarme, hombre que os he hablado la verdad, la cual he oído de Dios: no hizo esto Abraham.
Vosotros hacéis las obras de vuestro padre. Dijéronle entonces: Nosotros no somos nacidos de fornicación; un padre tenemos, que es Dios.
Jesús entonces les dijo: Si vuestro padre fuera Dios, ciertamente me amaríais: porque yo de Dios he salido, y he venido; que no he venido de mí mismo, mas él me envió.
¿Por qué no reconocéis mi lenguaje? porque no podéis oir mi palabra.
Vosotros de vuestro padre el diablo sois, y los deseos de vuestro padre queréis cumplir. El, homicida ha sido desde el principio, y no permaneció en la verdad, porque no hay verdad en él. Cuando habla mentira, de suyo habla; porque es mentiroso, y padre de mentira.
Y porque yo digo verdad, no me creéis.
¿Quién de vosotros me redarguye de pecado? Pues si digo verdad, ¿por qué vosotros no me creéis?
El que es de Dios, las palabras de Dios oye: por esto no las oís vosotros, porque no sois de Dios.
Respondieron entonces los Judíos, y dijéronle: ¿No decimos bien nosotros, que tú eres Samaritano, y tienes demonio?
Respondió Jesús: Yo no tengo demonio, antes honro á mi Padre; y vosotros me habéis deshonrado.
Y no busco mi gloria: hay quien la busque, y juzgue.
De cierto, de cierto os digo, que el que guardare mi palabra, no verá muerte para siempre.
Entonces los Judíos le dijeron: Ahora conocemos que tienes demonio. Abraham murió, y los profetas, y tú dices: El que guardare mi palabra, no gustará muerte para siempre.
¿Eres tú mayor que nuestro padre Abraham, el cual murió? y los profetas murieron: ¿quién te haces á ti mismo?
Respondió Jesús: Si yo me glorifico á mí mismo, mi gloria es nada: mi Padre es el que me glorifica; el que vosotros decís que es vuestro Dios;
Y no le conocéis: mas yo le conozco; y si dijere que no le conozco, seré como vosotros mentiroso: mas le conozco, y guardo su palabra.
Abraham vuestro padre se gozó por ver mi día; y lo vió, y se gozó.
Dijéronle entonces los Judíos: Aun no tienes cincuenta años, ¿y has visto á Abraham?
Díjoles Jesús: De cierto, de cierto os digo: Antes que Abraham fuese, yo soy.
Tomaron entonces piedras para tirarle: mas Jesús se encubrió, y salió del templo; y atravesando por medio de ellos, se fué.
Y pasando Jesús, vió un hombre ciego desde su nacimiento.
Y preguntáronle sus discípulos, diciendo: Rabbí, ¿quién pecó, éste ó sus padres, para que naciese ciego?
Respondió Jesús: Ni éste pecó, ni sus padres: mas para que las obras de Dios se manifiesten en él.
Conviéneme obrar las obras del que me envió, entre tanto que el día dura: la noche viene, cuando nadie puede obrar.
Entre tanto que estuviere en el mundo, luz soy del mundo.
Esto dicho, escupió en tierra, é hizo lodo con la saliva, y untó con el lodo sobre los ojos del ciego,
Y díjole: Ve, lávate en el estanque de Siloé (que significa, si lo interpretares, Enviado). Y fué entonces, y lavóse, y volvió viendo.
Entonces los vecinos, y los que antes le habían visto que era ciego, decían: ¿No es éste el que se sentaba y mendigaba?
Unos decían: Este es; y otros: A él se parece. El decía: Yo soy.
Y dijéronle: ¿Cómo te fueron abiertos los ojos?
Respondió él y dijo: El hombre que se llama Jesús, hizo lodo, y me untó los ojos, y me dijo: Ve al Siloé, y lávate: y fuí, y me lavé, y recibí la vista.
Entonces le dijeron: ¿Dónde está aquél? El dijo: No sé.
Llevaron á los Fariseos al que antes había sido ciego.
Y era sábado cuando Jesús había hecho el lodo, y le había abierto los ojos.
Y volviéronle á preguntar también los Fariseos de qué manera había recibido la vista. Y él les dijo: Púsome lodo sobre los ojos, y me lavé, y veo.
Entonces unos de los Fariseos decían: Este hombre no es de Dios, que no guarda el sábado. Otros decían: ¿Cómo puede un hombre pecador hacer estas señales? Y había disensión entre ellos.
Vuelven á decir al ciego: ¿Tú, qué dices del que te abrió los ojos? Y él dijo: Que es profeta.
Mas los Judíos no creían de él, que había sido ciego, y hubiese recibido la vista, hasta que llamaron á los padres del que había recibido la vista;
Y preguntáronles, diciendo: ¿Es éste vuestro hijo, el que vosotros decís que nació ciego? ¿Cómo, pues, ve ahora?
Respondiéronles sus padres y dijeron: Sabemos que éste es nuestro hijo, y que nació ciego:
Mas cómo vea ahora, no sabemos; ó quién le haya abierto los ojos, nosotros no lo sabemos; él tiene edad, preguntadle á él; él hablará de sí.
Esto dijeron sus padres, porque tenían miedo de los Judíos: porque ya los Judíos habían resuelto que si alguno confesase ser él el Mesías, fuese fuera de la sinagoga.
Por eso dijeron sus padres: Edad tiene, preguntadle á él.
Así que, volvieron á llamar al hombre que había sido ciego, y dijéronle: Da gloria á Dios: nosotros sabemos que este hombre es pecador.
Entonces él respondió, y dijo: Si es pecador, no lo sé: una cosa sé, que habiendo yo sido ciego, ahora veo.
Y volviéronle á decir: ¿Qué te hizo? ¿Cómo te abrió los ojos?
Respondióles: Ya os lo he dicho, y no habéis atendido: ¿por qué lo queréis otra vez oir? ¿queréis también vosotros haceros sus discípulos?
Y le ultrajaron, y dijeron: Tú eres su discípulo; pero nosotros discípulos de Moisés somos.
Nosotros sabemos que á Moisés habló Dios: mas éste no sabemos de dónde es.
Respondió aquel hombre, y díjoles: Por cierto, maravillosa cosa es ésta, que vosotros no sabéis de dónde sea, y á mí me abrió los ojos.
Y sabemos que Dios no oye á los pecadores: mas si alguno es temeroso de Dios, y hace su voluntad, á éste oye.
Desde el siglo no fué oído, que abriese alguno los ojos de uno que nació ciego.
Si éste no fuera de Dios, no pudiera hacer nada.
Respondieron, y dijéronle: En pecados eres nacido todo, ¿y tú nos enseñas? Y echáronle fuera.
Oyó Jesús que le habían echado fuera; y hallándole, díjole: ¿Crees tú en el Hijo de Dios?
Respondió él, y dijo: ¿Quién es, Señor, para que crea en él?
Y díjole Jesús: Y le has visto, y el que habla contigo, él es.
Y él dice: Creo, Señor; y adoróle.
Y dijo Jesús: Yo, para juicio he venido á este mundo: para que los que no ven, vean; y los que ven, sean cegados.
Y ciertos de los Fariseos que estaban con él oyeron esto, y dijéronle: ¿Somos nosotros también ciegos?
Díjoles Jesús: Si fuerais ciegos, no tuvierais pecado: mas ahora porque decís, Vemos, por tanto vuestro pecado permanece.
De cierto, de cierto os digo: El que no entra por la puerta en el corral de las ovejas, mas sube por otra parte, el tal es ladrón y robador.
Mas el que entra por la puerta, el pastor de las ovejas es.
A éste abre el portero, y las ovejas oyen su voz: y á sus ovejas llama por nombre, y las saca.
Y como ha sacado fuera todas las propias, va delante de ellas; y las ovejas le siguen, porque conocen su voz.
Mas al extraño no seguirán, antes huirán de él: porque no conocen la voz de los extraños.
Esta parábola les dijo Jesús; mas ellos no entendieron qué era lo que les decía.
Volvióles, pues, Jesús á decir: De cierto, de cierto os digo: Yo soy la puerta de las ovejas.
Todos los que antes de mí vinieron, ladrones son y robadores; mas no los oyeron las ovejas.
Yo soy la puerta: el que por mí entrare, será salvo; y entrará, y saldrá, y hallará pastos.
El ladrón no viene sino para hurtar, y matar, y destruir: yo he venido para que tengan vida, y para que la tengan en abundancia.
Yo soy el buen pastor: el buen pastor su vida da por las ovejas.
Mas el asalariado, y que no es el pastor, de quien no son propias las ovejas, ve al lobo que viene, y deja las ovejas, y huye, y el lobo las arrebata, y esparce las ovejas.
Así que, el asalariado, huye, porque es asalariado, y no tiene cuidado de las ovejas.
Yo soy el buen pastor; y conozco mis ovejas, y las mías me conocen.
Como el Padre me conoce, y yo conozco al Padre; y pongo mi vida por las ovejas.
También tengo otras ovejas que no son de este redil; aquéllas también me conviene traer, y oirán mi voz; y habrá un rebaño, y un pastor.
Por eso me ama el Padre, porque yo pongo mi vida, para volverla á tomar.
Nadie me la quita, mas yo la pongo de mí mismo. Tengo poder para ponerla, y tengo poder para volverla á tomar. Este mandamiento recibí de mi Padre.
Y volvió á haber disensión entre los Judíos por estas palabras.
Y muchos de ellos decían: Demonio tiene, y está fuera de sí; ¿para qué le oís?
Decían otros: Estas palabras no son de endemoniado: ¿puede el demonio abrir los ojos de los ciegos?
Y se hacía la fiesta de la dedicación en Jerusalem; y era invierno;
Y Jesús andaba en el templo por el portal de Salomón.
Y rodeáronle los Judíos y dijéronle: ¿Hasta cuándo nos has de turbar el alma? Si tú eres el Cristo, dínos lo abiertamente.
Respondióles Jesús: Os lo he dicho, y no creéis: las obras que yo hago en nombre de mi Padre, ellas dan testimonio de mí;
Mas vosotros no creéis, porque no sois de mis ovejas, como os he dicho.
Mis ovejas oyen mi voz, y yo las conozco, y me siguen;
Y yo les doy vida eterna: y no perecerán para siempre, ni nadie las arrebatará de mi mano.
Mi Padre que me las dió, mayor que todos es: y nadie las puede arrebatar de la mano de mi Padre.
Yo y el Padre una cosa somos.
Entonces volvieron á tomar piedras los Judíos para apedrearle.
Respondióles Jesús: Muchas buenas obras os he mostrado de mi Padre; ¿por cuál obra de esas me apedreáis?
Respondiéronle los Judíos, diciendo: Por buena obra no te apedreamos, sino por la blasfemia; y porque tú, siendo hombre, te haces Dios.
Respondióles Jesús: ¿No está escrito en vuestra ley: Yo dije, Dioses sois?
Si dijo, dioses, á aquellos á los cuales fué hecha palabra de Dios (y la Escritura no puede ser quebrantada);
¿A quien el Padre santificó y envió al mundo, vosotros decís: Tú blasfemas, porque dije: Hijo de Dios soy?
Si no hago obras de mi Padre, no me creáis.
Mas si las hago, aunque á mí no creáis, creed á las obras; para que conozcáis y creáis que el Padre está en mí, y yo en el Padre.
Y procuraban otra vez prenderle; mas él se salió de sus manos;
Y volvióse tras el Jordán, á aquel lugar donde primero había estado bautizando Juan; y estúvose allí.
Y muchos venían á él, y decían: Juan, á la verdad, ninguna señal hizo; mas todo lo que Juan dijo de éste, era verdad.
Y muchos creyeron allí en él.
Estaba entonces enfermo uno llamado Lázaro, de Bethania, la aldea de María y de Marta su hermana.
(Y María, cuyo hermano Lázaro estaba enfermo, era la que ungió al Señor con ungüento, y limpió sus pies con sus cabellos.)
Enviaron, pues, sus hermanas á él, diciendo: Señor, he aquí, el que amas está enfermo.
Y oyéndolo Jesús, dijo: Esta enfermedad no es para muerte, mas por gloria de Dios, para que el Hijo de Dios sea glorificado por ella.
Y amaba Jesús á Marta, y á su hermana, y á Lázaro.
Como oyó pues que estaba enfermo, quedóse aún dos días en aquel lugar donde estaba.
Luego, después de esto, dijo á los discípulos: Vamos á Judea otra vez.
Dícenle los discípulos: Rabbí, ahora procuraban los Judíos apedrearte, ¿y otra vez vas allá?
Respondió Jesús: ¿No tiene el día doce horas? El que anduviere de día, no tropieza, porque ve la luz de este mundo.
Mas el que anduviere de noche, tropieza, porque no hay luz en él.
Dicho esto, díceles después: Lázaro nuestro amigo duerme; mas voy á despertarle del sueño.
Dijeron entonces sus discípulos: Señor, si duerme, salvo estará.
Mas esto decía Jesús de la muerte de él: y ellos pensaron que hablaba del reposar del sueño.
Entonces, pues, Jesús les dijo claramente: Lázaro es muerto;
Y huélgome por vosotros, que yo no haya estado allí, para que creáis: mas vamos á él.
Dijo entonces Tomás, el que se dice el Dídimo, á sus condiscípulos: Vamos también nosotros, para que muramos con él.
Vino pues Jesús, y halló que había ya cuatro días que estaba en el sepulcro.
Y Bethania estaba cerca de Jerusalem, como quince estadios;
Y muchos de los Judíos habían venido á Marta y á María, á consolarlas de su hermano.
Entonces Marta, como oyó que Jesús venía, salió á encontrarle; mas María se estuvo en casa.
Y Marta dijo á Jesús: Señor, si hubieses estado aquí, mi hermano no fuera muerto;
Mas también sé ahora, que todo lo que pidieres de Dios, te dará Dios.
Dícele Jesús: Resucitará tu hermano.
Marta le dice: Yo sé que resucitará en la resurrección en el día postrero.
Dícele Jesús: Yo soy la resurrección y la vida: el que cree en mí, aunque esté muerto, vivirá.
Y todo aquel que vive y cree en mí, no morirá eternamente. ¿Crees esto?
Dícele: Sí, Señor; yo he creído que tú eres el Cristo, el Hijo de Dios, que has venido al mundo.
Y esto dicho, fuése, y llamó en secreto á María su hermana, diciendo: El Maestro está aquí y te llama.
Ella, como lo oyó, levántase prestamente y viene á él.
(Que aun no había llegado Jesús á la aldea, mas estaba en aquel lugar donde Marta le había encontrado.)
Entonces los Judíos que estaban en casa con ella, y la consolaban, como vieron que María se había levantado prestamente, y había salido, siguiéronla, diciendo: Va al sepulcro á llorar allí.
Mas María, como vino donde estaba Jesús, viéndole, derribóse á sus pies, diciéndole: Señor, si hubieras estado aquí, no fuera muerto mi hermano.
Jesús entonces, como la vió llorando, y á los Judíos que habían venido juntamente con ella llorando, se conmovió en espíritu, y turbóse,
Y dijo: ¿Dónde le pusisteis? Dícenle: Señor, ven, y ve.
Y lloró Jesús.
Dijeron entonces los Judíos: Mirad cómo le amaba.
Y algunos de ellos dijeron: ¿No podía éste que abrió los ojos al ciego, hacer que éste no muriera?
Y Jesús, conmoviéndose otra vez en sí mismo, vino al sepulcro. Era una cueva, la cual tenía una piedra encima.
Dice Jesús: Quitad la piedra. Marta, la hermana del que se había muerto, le dice: Señor, hiede ya, que es de cuatro días.
Jesús le dice: ¿No te he dicho que, si creyeres, verás la gloria de Dios?
Entonces quitaron la piedra de donde el muerto había sido puesto. Y Jesús, alzando los ojos arriba, dijo: Padre, gracias te doy que me has oído.
Que yo sabía que siempre me oyes; mas por causa de la compañía que está alrededor, lo dije, para que crean que tú me has enviado.
Y habiendo dicho estas cosas, clamó á gran voz: Lázaro, ven fuera.
Y el que había estado muerto, salió, atadas las manos y los pies con vendas; y su rostro estaba envuelto en un sudario. Díceles Jesús: Desatadle, y dejadle ir.
Entonces muchos de los Judíos que habían venido á María, y habían visto lo que había hecho Jesús, creyeron en él.
Mas algunos de ellos fueron á los Fariseos, y dijéronles lo que Jesús había hecho.
Entonces los pontífices y los Fariseos juntaron concilio, y decían: ¿Qué hacemos? porque este hombre hace muchas señales.
Si le dejamos así, todos creerán en él: y vendrán los Romanos, y quitarán nuestro lugar y la nación.
Y Caifás, uno de ellos, sumo pontífice de aquel año, les dijo: Vosotros no sabéis nada;
Ni pensáis que nos conviene que un hombre muera por el pueblo, y no que toda la nación se pierda.
Mas esto no lo dijo de sí mismo; sino que, como era el sumo pontífice de aquel año, profetizó que Jesús había de morir por la nación:
Y no solamente por aquella nación, mas también para que juntase en uno los hijos de Dios que estaban derramados.
Así que, desde aquel día consultaban juntos de matarle.
Por tanto, Jesús ya no andaba manifiestamente entre los Judíos; mas fuése de allí á la tierra que está junto al desierto, á una ciudad que se llama Ephraim: y estábase allí con sus discípulos.
Y la Pascua de los Judíos estaba cerca: y muchos subieron de aquella tierra á Jerusalem antes de la Pascua, para purificarse;
Y buscaban á Jesús, y hablaban los unos con los otros estando en el templo: ¿Qué os parece, que no vendrá á la fiesta?
Y los pontífices y los Fariseos habían dado mandamiento, que si alguno supiese dónde estuviera, lo manifestase, para que le prendiesen.
Antes de la fiesta de la Pascua, sabiendo Jesús que su hora había venido para que pasase de este mundo al Padre, como había amado á los suyos que estaban en el mundo, amólos hasta el fin.
Y la cena acabada, como el diablo ya había metido en el corazón de Judas, hijo de Simón Iscariote, que le entregase,
Sabiendo Jesús que el Padre le había dado todas las cosas en las manos, y que había salido de Dios, y á Dios iba,
Levántase de la cena, y quítase su ropa, y tomando una toalla, ciñóse.
Luego puso agua en un lebrillo, y comenzó á lavar los pies de los discípulos, y á limpiarlos con la toalla con que estaba ceñido.
Entonces vino á Simón Pedro; y Pedro le dice: ¿Señor, tú me lavas los pies?
Respondió Jesús, y díjole: Lo que yo hago, tú no entiendes ahora; mas lo entenderás después.
Dícele Pedro: No me lavarás los pies jamás. Respondióle Jesús: Si no te lavare, no tendrás parte conmigo.
Dícele Simón Pedro: Señor, no sólo mis pies, mas aun las manos y la cabeza.
Dícele Jesús: El que está lavado, no necesita sino que lave los pies, mas está todo limpio: y vosotros limpios estáis, aunque no todos.
Porque sabía quién le había de entregar; por eso dijo: No estáis limpios todos.
Así que, después que les hubo lavado los pies, y tomado su ropa, volviéndose á sentar á la mesa, díjoles: ¿Sabéis lo que os he hecho?
Vosotros me llamáis, Maestro, y, Señor: y decís bien; porque lo soy.
Pues si yo, el Señor y el Maestro, he lavado vuestros pies, vosotros también debéis lavar los pies los unos á los otros.
Porque ejemplo os he dado, para que como yo os he hecho, vosotros también hagáis.
De cierto, de cierto os digo: El siervo no es mayor que su señor, ni el apóstol es mayor que el que le envió.
Si sabéis estas cosas, bienaventurados seréis, si las hiciereis.
No hablo de todos vosotros: yo sé los que he elegido: mas para que se cumpla la Escritura: El que come pan conmigo, levantó contra mí su calcañar.
Desde ahora os lo digo antes que se haga, para que cuando se hiciere, creáis que yo soy.
De cierto, de cierto os digo: El que recibe al que yo enviare, á mí recibe; y el que á mí recibe, recibe al que me envió.
Como hubo dicho Jesús esto, fué conmovido en el espíritu, y protestó, y dijo: De cierto, de cierto os digo, que uno de vosotros me ha de entregar.
Entonces los discípulos mirábanse los unos á los otros, dudando de quién decía.
Y uno de sus discípulos, al cual Jesús amaba, estaba recostado en el seno de Jesús.
A éste, pues, hizo señas Simón Pedro, para que preguntase quién era aquél de quien decía.
El entonces recostándose sobre el pecho de Jesús, dícele: Señor, ¿quién es?
Respondió Jesús: Aquél es, á quien yo diere el pan mojado. Y mojando el pan, diólo á Judas Iscariote, hijo de Simón.
Y tras el bocado Satanás entró en él. Entonces Jesús le dice: Lo que haces, haz lo más presto.
Mas ninguno de los que estaban á la mesa entendió á qué propósito le dijo esto.
Porque los unos pensaban, porque Judas tenía la bolsa, que Jesús le decía: Compra lo que necesitamos para la fiesta: ó, que diese algo á los pobres.
Como él pues hubo tomado el bocado, luego salió: y era ya noche.
Entonces como él salió, dijo Jesús: Ahora es glorificado el Hijo del hombre, y Dios es glorificado en él.
Si Dios es glorificado en él, Dios también le glorificará en sí mismo, y luego le glorificará.
Hijitos, aun un poco estoy con vosotros. Me buscaréis; mas, como dije á los Judíos: Donde yo voy, vosotros no podéis venir; así digo á vosotros ahora.
Un mandamiento nuevo os doy: Que os améis unos á otros: como os he amado, que también os améis los unos á los otros.
En esto conocerán todos que sois mis discípulos, si tuviereis amor los unos con los otros.
Dícele Simón Pedro: Señor, ¿adónde vas? Respondióle Jesús: Donde yo voy, no me puedes ahora seguir; mas me seguirás después.
Dícele Pedro: Señor, ¿por qué no te puedo seguir ahora? mi alma pondré por ti.
Respondióle Jesús: ¿Tu alma pondrás por mí? De cierto, de cierto te digo: No cantará el gallo, sin que me hayas negado tres veces.
No se turbe vuestro corazón: creéis en Dios, creed también en mí.
En la casa de mi Padre muchas moradas hay: de otra manera os lo hubiera dicho: voy, pues, á preparar lugar para vosotros.
Y si me fuere, y os aparejare lugar, vendré otra vez, y os tomaré á mí mismo: para que donde yo estoy, vosotros también estéis.
Y sabéis á dónde yo voy; y sabéis el camino.
Dícele Tomás: Señor, no sabemos á dónde vas: ¿cómo, pues, podemos saber el camino?
Jesús le dice: Yo soy el camino, y la verdad, y la vida: nadie viene al Padre, sino por mí.
Si me conocieseis, también á mi Padre conocierais: y desde ahora le conocéis, y le habéis visto.
Dícele Felipe: Señor, muéstranos el Padre, y nos basta.
Jesús le dice: ¿Tanto tiempo ha que estoy con vosotros, y no me has conocido, Felipe? El que me ha visto, ha visto al Padre; ¿cómo, pues, dices tú: Muéstranos el Padre?
¿No crees que yo soy en el Padre, y el Padre en mí? Las palabras que yo os hablo, no las hablo de mí mismo: mas el Padre que está en mí, él hace las obras.
Creedme que yo soy en el Padre, y el Padre en mí: de otra manera, creedme por las mismas obras.
De cierto, de cierto os digo: El que en mí cree, las obras que yo hago también él las hará; y mayores que éstas hará; porque yo voy al Padre.
Y todo lo que pidiereis al Padre en mi nombre, esto haré, para que el Padre sea glorificado en el Hijo.
Si algo pidiereis en mi nombre, yo lo haré.
Si me amáis, guardad mis mandamientos;
Y yo rogaré al Padre, y os dará otro Consolador, para que esté con vosotros para siempre:
Al Espíritu de verdad, al cual el mundo no puede recibir, porque no le ve, ni le conoce: mas vosotros le conocéis; porque está con vosotros, y será en vosotros.
No os dejaré huérfanos: vendré á vosotros.
Aun un poquito, y el mundo no me verá más; empero vosotros me veréis; porque yo vivo, y vosotros también viviréis.
En aquel día vosotros conoceréis que yo estoy en mi Padre, y vosotros en mí, y yo en vosotros.
El que tiene mis mandamientos, y los guarda, aquél es el que me ama; y el que me ama, será amado de mi Padre, y yo le amaré, y me manifestaré á él.
Dícele Judas, no el Iscariote: Señor, ¿qué hay porque te hayas de manifestar á nosotros, y no al mundo?
Respondió Jesús, y díjole: El que me ama, mi palabra guardará; y mi Padre le amará, y vendremos á él, y haremos con él morada.
El que no me ama, no guarda mis palabras: y la palabra que habéis oído, no es mía, sino del Padre que me envió.
Estas cosas os he hablado estando con vosotros.
Mas el Consolador, el Espíritu Santo, al cual el Padre enviará en mi nombre, él os enseñará todas las cosas, y os recordará todas las cosas que os he dicho.
La paz os dejo, mi paz os doy: no como el mundo la da, yo os la doy. No se turbe vuestro corazón, ni tenga miedo.
Habéis oído cómo yo os he dicho: Voy, y vengo á vosotros. Si me amaseis, ciertamente os gozaríais, porque he dicho que voy al Padre: porque el Padre mayor es que yo.
Y ahora os lo he dicho antes que se haga; para que cuando se hiciere, creáis.
Ya no hablaré mucho con vosotros: porque viene el príncipe de este mundo; mas no tiene nada en mí.
Empero para que conozca el mundo que amo al Padre, y como el Padre me dió el mandamiento, así hago. Levantaos, vamos de aquí.
Yo soy la vid verdadera, y mi Padre es el labrador.
Todo pámpano que en mí no lleva fruto, le quitará: y todo aquel que lleva fruto, le limpiará, para que lleve más fruto.
Ya vosotros sois limpios por la palabra que os he hablado.
Estad en mí, y yo en vosotros. Como el pámpano no puede llevar fruto de sí mismo, si no estuviere en la vid; así ni vosotros, si no estuviereis en mí.
Yo soy la vid, vosotros los pámpanos: el que está en mí, y yo en él, éste lleva mucho fruto; porque sin mí nada podéis hacer.
El que en mí no estuviere, será echado fuera como mal pámpano, y se secará; y los cogen, y los echan en el fuego, y arden.
Si estuviereis en mí, y mis palabras estuvieren en vosotros, pedid todo lo que quisiereis, y os será hecho.
En esto es glorificado mi Padre, en que llevéis mucho fruto, y seáis así mis discípulos.
Como el Padre me amó, también yo os he amado: estad en mi amor.
Si guardareis mis mandamientos, estaréis en mi amor; como yo también he guardado los mandamientos de mi Padre, y estoy en su amor.
Estas cosas os he hablado, para que mi gozo esté en vosotros, y vuestro gozo sea cumplido.
Este es mi mandamiento: Que os améis los unos á los otros, como yo os he amado.
Nadie tiene mayor amor que este, que ponga alguno su vida por sus amigos.
Vosotros sois mis amigos, si hiciereis las cosas que yo os mando.
Ya no os llamaré siervos, porque el siervo no sabe lo que hace su señor: mas os he llamado amigos, porque todas las cosas que oí de mi Padre, os he hecho notorias.
No me elegisteis vosotros á mí, mas yo os elegí á vosotros; y os he puesto para que vayáis y llevéis fruto, y vuestro fruto permanezca: para que todo lo que pidiereis del Padre en mi nombre, él os lo dé.
Esto os mando: Que os améis los unos á los otros.
Si el mundo os aborrece, sabed que á mí me aborreció antes que á vosotros.
Si fuerais del mundo, el mundo amaría lo suyo; mas porque no sois del mundo, antes yo os elegí del mundo, por eso os aborrece el mundo.
Acordaos de la palabra que yo os he dicho: No es el siervo mayor que su señor. Si á mí me han perseguido, también á vosotros perseguirán: si han guardado mi palabra, también guardarán la vuestra.
Mas todo esto os harán por causa de mi nombre, porque no conocen al que me ha enviado.
Si no hubiera venido, ni les hubiera hablado, no tendrían pecado, mas ahora no tienen excusa de su pecado.
El que me aborrece, también á mi Padre aborrece.
Si no hubiese hecho entre ellos obras cuales ningún otro ha hecho, no tendrían pecado; mas ahora, y las han visto, y me aborrecen á mí y á mi Padre.
Mas para que se cumpla la palabra que está escrita en su ley: Que sin causa me aborrecieron.
Empero cuando viniere el Consolador, el cual yo os enviaré del Padre, el Espíritu de verdad, el cual procede del Padre, él dará testimonio de mí.
Y vosotros daréis testimonio, porque estáis conmigo desde el principio.
Estas cosas os he hablado, para que no os escandalicéis.
Os echarán de las sinagogas; y aun viene la hora, cuando cualquiera que os matare, pensará que hace servicio á Dios.
Y estas cosas os harán, porque no conocen al Padre ni á mí.
Mas os he dicho esto, para que cuando aquella hora viniere, os acordéis que yo os lo había dicho. Esto empero no os lo dije al principio, porque yo estaba con vosotros.
Mas ahora voy al que me envió; y ninguno de vosotros me pregunta: ¿Adónde vas?
Antes, porque os he hablado estas cosas, tristeza ha henchido vuestro corazón.
Empero yo os digo la verdad: Os es necesario que yo vaya: porque si yo no fuese, el Consolador no vendría á vosotros; mas si yo fuere, os le enviaré.
Y cuando él viniere redargüirá al mundo de pecado, y de justicia, y de juicio:
De pecado ciertamente, por cuanto no creen en mí;
Y de justicia, por cuanto voy al Padre, y no me veréis más;
Y de juicio, por cuanto el príncipe de este mundo es juzgado.
Aun tengo muchas cosas que deciros, mas ahora no las podéis llevar.
Pero cuando viniere aquel Espíritu de verdad, él os guiará á toda verdad; porque no hablará de sí mismo, sino que hablará todo lo que oyere, y os hará saber las cosas que han de venir.
El me glorificará: porque tomará de lo mío, y os lo hará saber.
Todo lo que tiene el Padre, mío es: por eso dije que tomará de lo mío, y os lo hará saber.
Un poquito, y no me veréis; y otra vez un poquito, y me veréis: porque yo voy al Padre.
Entonces dijeron algunos de sus discípulos unos á otros: ¿Qué es esto que nos dice: Un poquito, y no me veréis; y otra vez un poquito, y me veréis: y, porque yo voy al Padre?
Decían pues: ¿Qué es esto que dice: Un poquito? No entendemos lo que habla.
Y conoció Jesús que le querían preguntar, y díjoles: ¿Preguntáis entre vosotros de esto que dije: Un poquito, y no me veréis, y otra vez un poquito, y me veréis?
De cierto, de cierto os digo, que vosotros lloraréis y lamentaréis, y el mundo se alegrará: empero aunque vosotros estaréis tristes, vuestra tristeza se tornará en gozo.
La mujer cuando pare, tiene dolor, porque es venida su hora; mas después que ha parido un niño, ya no se acuerda de la angustia, por el gozo de que haya nacido un hombre en el mundo.
También, pues, vosotros ahora ciertamente tenéis tristeza; mas otra vez os veré, y se gozará vuestro corazón, y nadie quitará de vosotros vuestro gozo.
Y aquel día no me preguntaréis nada. De cierto, de cierto os digo, que todo cuanto pidiereis al Padre en mi nombre, os lo dará.
Hasta ahora nada habéis pedido en mi nombre: pedid, y recibiréis, para que vuestro gozo sea cumplido.
Estas cosas os he hablado en proverbios: la hora viene cuando ya no os hablaré por proverbios, pero claramente os anunciaré del Padre.
Aquel día pediréis en mi nombre: y no os digo, que yo rogaré al Padre por vosotros;
Pues el mismo Padre os ama, porque vosotros me amasteis, y habéis creído que yo salí de Dios.
Salí del Padre, y he venido al mundo: otra vez dejo el mundo, y voy al Padre.
Dícenle sus discípulos: He aquí, ahora hablas claramente, y ningún proverbio dices.
Ahora entendemos que sabes todas las cosas, y no necesitas que nadie te pregunte: en esto creemos que has salido de Dios.
Respondióles Jesús: ¿Ahora creéis?
He aquí, la hora viene, y ha venido, que seréis esparcidos cada uno por su parte, y me dejaréis solo: mas no estoy solo, porque el Padre está conmigo.
Estas cosas os he hablado, para que en mí tengáis paz. En el mundo tendréis aflicción: mas confiad, yo he vencido al mundo.
Como Jesús hubo dicho estas cosas, salióse con sus discípulos tras el arroyo de Cedrón, donde estaba un huerto, en el cual entró Jesús y sus discípulos.
Y también Judas, el que le entregaba, sabía aquel lugar; porque muchas veces Jesús se juntaba allí con sus discípulos.
Judas pues tomando una compañía, y ministros de los pontífices y de los Fariseos, vino allí con linternas y antorchas, y con armas.
Empero Jesús, sabiendo todas las cosas que habían de venir sobre él, salió delante, y díjoles: ¿A quién buscáis?
Respondiéronle: A Jesús Nazareno. Díceles Jesús: Yo soy. (Y estaba también con ellos Judas, el que le entregaba.)
Y como les dijo, Yo soy, volvieron atrás, y cayeron en tierra.
Volvióles, pues, á preguntar: ¿A quién buscáis? Y ellos dijeron: A Jesús Nazareno.
Respondió Jesús: Os he dicho que yo soy: pues si á mí buscáis, dejad ir á éstos.
Para que se cumpliese la palabra que había dicho: De los que me diste, ninguno de ellos perdí.
Entonces Simón Pedro, que tenía espada, sacóla, é hirió al siervo del pontífice, y le cortó la oreja derecha. Y el siervo se llamaba Malco.
Jesús entonces dijo á Pedro: Mete tu espada en la vaina: el vaso que el Padre me ha dado, ¿no lo tengo de beber?
Entonces la compañía y el tribuno, y los ministros de los Judíos, prendieron á Jesús y le ataron,
Y lleváronle primeramente á Anás; porque era suegro de Caifás, el cual era pontífice de aquel año.
Y era Caifás el que había dado el consejo á los Judíos, que era necesario que un hombre muriese por el pueblo.
Y seguía á Jesús Simón Pedro, y otro discípulo. Y aquel discípulo era conocido del pontífice, y entró con Jesús al atrio del pontífice;
Mas Pedro estaba fuera á la puerta. Y salió aquel discípulo que era conocido del pontífice, y habló á la portera, y metió dentro á Pedro.
Entonces la criada portera dijo á Pedro: ¿No eres tú también de los discípulos de este hombre? Dice él: No soy.
Y estaban en pie los siervos y los ministros que habían allegado las ascuas; porque hacía frío, y calentábanse: y estaba también con ellos Pedro en pie, calentándose.
Y el pontífice preguntó á Jesús acerca de sus discípulos y de su doctrina.
Jesús le respondió: Yo manifiestamente he hablado al mundo: yo siempre he enseñado en la sinagoga y en el templo, donde se juntan todos los Judíos, y nada he hablado en oculto.
¿Qué me preguntas á mí? Pregunta á los que han oído, qué les haya yo hablado: he aquí, ésos saben lo que yo he dicho.
Y como él hubo dicho esto, uno de los criados que estaba allí, dió una bofetada á Jesús, diciendo: ¿Así respondes al pontífice?
Respondióle Jesús: Si he hablado mal, da testimonio del mal: y si bien, ¿por qué me hieres?
Y Anás le había enviado atado á Caifás pontífice.
Estaba pues Pedro en pie calentándose. Y dijéronle: ¿No eres tú de sus discípulos? El negó, y dijo: No soy.
Uno de los siervos del pontífice, pariente de aquél á quien Pedro había cortado la oreja, le dice: ¿No te vi yo en el huerto con él?
Y negó Pedro otra vez: y luego el gallo cantó.
Y llevaron á Jesús de Caifás al pretorio: y era por la mañana: y ellos no entraron en el pretorio por no ser contaminados, sino que comiesen la pascua.
Entonces salió Pilato á ellos fuera, y dijo: ¿Qué acusación traéis contra este hombre?
Respondieron y dijéronle: Si éste no fuera malhechor, no te le habríamos entregado.
Díceles entonces Pilato: Tomadle vosotros, y juzgadle según vuestra ley. Y los Judíos le dijeron: A nosotros no es lícito matar á nadie:
Para que se cumpliese el dicho de Jesús, que había dicho, dando á entender de qué muerte había de morir.
Así que, Pilato volvió á entrar en el pretorio, y llamó á Jesús, y díjole: ¿Eres tú el Rey de los Judíos?
Respondióle Jesús: ¿Dices tú esto de ti mismo, ó te lo han dicho otros de mí?
Pilato respondió: ¿Soy yo Judío? Tu gente, y los pontífices, te han entregado á mí: ¿qué has hecho?
Respondió Jesús: Mi reino no es de este mundo: si de este mundo fuera mi reino, mis servidores pelearían para que yo no fuera entregado á los Judíos: ahora, pues, mi reino no es de aquí.
Díjole entonces Pilato: ¿Luego rey eres tú? Respondió Jesús: Tú dices que yo soy rey. Yo para esto he nacido, y para esto he venido al mundo, para dar testimonio á la verdad. Todo aquél que es de la verdad, oye mi voz.
Dícele Pilato: ¿Qué cosa es verdad? Y como hubo dicho esto, salió otra vez á los Judíos, y díceles: Yo no hallo en él ningún crimen.
Empero vosotros tenéis costumbre, que os suelte uno en la Pascua: ¿queréis, pues, que os suelte al Rey de los Judíos?
Entonces todos dieron voces otra vez, diciendo: No á éste, sino á Barrabás. Y Barrabás era ladrón.
Así que, entonces tomó Pilato á Jesús, y le azotó.
Y los soldados entretejieron de espinas una corona, y pusiéron la sobre su cabeza, y le vistieron de una ropa de grana;
Y decían: ¡Salve, Rey de los Judíos! y dábanle de bofetadas.
Entonces Pilato salió otra vez fuera, y díjoles: He aquí, os le traigo fuera, para que entendáis que ningún crimen hallo en él.
Y salió Jesús fuera, llevando la corona de espinas y la ropa de grana. Y díceles Pilato: He aquí el hombre.
Y como le vieron los príncipes de los sacerdotes, y los servidores, dieron voces diciendo: Crucifícale, crucifícale. Díceles Pilato: Tomadle vosotros, y crucificadle; porque yo no hallo en él crimen.
Respondiéronle los Judíos: Nosotros tenemos ley, y según nuestra ley debe morir, porque se hizo Hijo de Dios.
Y como Pilato oyó esta palabra, tuvo más miedo.
Y entró otra vez en el pretorio, y dijo á Jesús: ¿De dónde eres tú? Mas Jesús no le dió respuesta.
Entonces dícele Pilato: ¿A mí no me hablas? ¿no sabes que tengo potestad para crucificarte, y que tengo potestad para soltarte?
Respondió Jesús: Ninguna potestad tendrías contra mí, si no te fuese dado de arriba: por tanto, el que á ti me ha entregado, mayor pecado tiene.
Desde entonces procuraba Pilato soltarle; mas los Judíos daban voces, diciendo: Si á éste sueltas, no eres amigo de César: cualquiera que se hace rey, á César contradice.
Entonces Pilato, oyendo este dicho, llevó fuera á Jesús, y se sentó en el tribunal en el lugar que se dice Lithóstrotos, y en hebreo Gabbatha.
Y era la víspera de la Pascua, y como la hora de sexta. Entonces dijo á los Judíos: He aquí vuestro Rey.
Mas ellos dieron voces: Quita, quita, crucifícale. Díceles Pilato: ¿A vuestro Rey he de crucificar? Respondieron los pontífices: No tenemos rey sino á César.
Así que entonces lo entregó á ellos para que fuese crucificado. Y tomaron á Jesús, y le llevaron.
Y llevando su cruz, salió al lugar que se dice de la Calavera, y en hebreo, Gólgotha;
Donde le crucificaron, y con él otros dos, uno á cada lado, y Jesús en medio.
Y escribió también Pilato un título, que puso encima de la cruz. Y el escrito era: JESUS NAZARENO, REY DE LOS JUDIOS.
Y muchos de los Judíos leyeron este título: porque el lugar donde estaba crucificado Jesús era cerca de la ciudad: y estaba escrito en hebreo, en griego, y en latín.
Y decían á Pilato los pontífices de los Judíos: No escribas, Rey de los Judíos: sino, que él dijo: Rey soy de los Judíos.
Respondió Pilato: Lo que he escrito, he escrito.
Y como los soldados hubieron crucificado á Jesús, tomaron sus vestidos, é hicieron cuatro partes (para cada soldado una parte); y la túnica; mas la túnica era sin costura, toda tejida desde arriba.
Y dijeron entre ellos: No la partamos, sino echemos suertes sobre ella, de quién será; para que se cumpliese la Escritura, que dice: Partieron para sí mis vestidos, y sobre mi vestidura echaron suertes. Y los soldados hicieron esto.
Y estaban junto á la cruz de Jesús su madre, y la hermana de su madre, María mujer de Cleofas, y María Magdalena.
Y como vió Jesús á la madre, y al discípulo que él amaba, que estaba presente, dice á su madre: Mujer, he ahí tu hijo.
Después dice al discípulo: He ahí tu madre. Y desde aquella hora el discípulo la recibió consigo.
Después de esto, sabiendo Jesús que todas las cosas eran ya cumplidas, para que la Escritura se cumpliese, dijo: Sed tengo.
Y estaba allí un vaso lleno de vinagre: entonces ellos hinchieron una esponja de vinagre, y rodeada á un hisopo, se la llegaron á la boca.
Y como Jesús tomó el vinagre, dijo: Consumado es. Y habiendo inclinado la cabeza, dió el espíritu.
Entonces los Judíos, por cuanto era la víspera de la Pascua, para que los cuerpos no quedasen en la cruz en el sábado, pues era el gran día del sábado, rogaron á Pilato que se les quebrasen las piernas, y fuesen quitados.
Y vinieron los soldados, y quebraron las piernas al primero, y asimismo al otro que había sido crucificado con él.
Mas cuando vinieron á Jesús, como le vieron ya muerto, no le quebraron las piernas:
Empero uno de los soldados le abrió el costado con una lanza, y luego salió sangre y agua.
Y el que lo vió, da testimonio, y su testimonio es verdadero: y él sabe que dice verdad, para que vosotros también creáis.
Porque estas cosas fueron hechas para que se cumpliese la Escritura: Hueso no quebrantaréis de él.
Y también otra Escritura dice: Mirarán al que traspasaron.
Después de estas cosas, José de Arimatea, el cual era discípulo de Jesús, mas secreto por miedo de los Judíos, rogó á Pilato que pudiera quitar el cuerpo de Jesús: y permitióselo Pilato. Entonces vino, y quitó el cuerpo de Jesús.
Y vino también Nicodemo, el que antes había venido á Jesús de noche, trayendo un compuesto de mirra y de áloes, como cien libras.
Tomaron pues el cuerpo de Jesús, y envolviéronlo en lienzos con especias, como es costumbre de los Judíos sepultar.
Y en aquel lugar donde había sido crucificado, había un huerto; y en el huerto un sepulcro nuevo, en el cual aun no había sido puesto ninguno.
Allí, pues, por causa de la víspera de la Pascua de los Judíos, porque aquel sepulcro estaba cerca, pusieron á Jesús.
Y el primer día de la semana, María Magdalena vino de mañana, siendo aún obscuro, al sepulcro; y vió la piedra quitada del sepulcro.
Entonces corrió, y vino á Simón Pedro, y al otro discípulo, al cual amaba Jesús, y les dice: Han llevado al Señor del sepulcro, y no sabemos dónde le han puesto.
Y salió Pedro, y el otro discípulo, y vinieron al sepulcro.
Y corrían los dos juntos; mas el otro discípulo corrió más presto que Pedro, y llegó primero al sepulcro.
Y bajándose á mirar, vió los lienzos echados; mas no entró.
Llegó luego Simón Pedro siguiéndole, y entró en el sepulcro, y vió los lienzos echados,
Y el sudario, que había estado sobre su cabeza, no puesto con los lienzos, sino envuelto en un lugar aparte.
Y entonces entró también el otro discípulo, que había venido primero al sepulcro, y vió, y creyó.
Porque aun no sabían la Escritura, que era necesario que él resucitase de los muertos.
Y volvieron los discípulos á los suyos.
Empero María estaba fuera llorando junto al sepulcro: y estando llorando, bajóse á mirar el sepulcro;
Y vió dos ángeles en ropas blancas que estaban sentados, el uno á la cabecera, y el otro á los pies, donde el cuerpo de Jesús había sido puesto.
Y dijéronle: Mujer, ¿por qué lloras? Díceles: Porque se han llevado á mi Señor, y no sé dónde le han puesto.
Y como hubo dicho esto, volvióse atrás, y vió á Jesús que estaba allí; mas no sabía que era Jesús.
Dícele Jesús: Mujer, ¿por qué lloras? ¿á quién buscas? Ella, pensando que era el hortelano, dícele: Señor, si tú lo has llevado, dime dónde lo has puesto, y yo lo llevaré.
Dícele Jesús: ¡María! Volviéndose ella, dícele: ¡Rabboni! que quiere decir, Maestro.
Dícele Jesús: No me toques: porque aun no he subido á mi Padre: mas ve á mis hermanos, y diles: Subo á mi Padre y á vuestro Padre, á mi Dios y á vuestro Dios.
Fué María Magdalena dando las nuevas á los discípulos de que había visto al Señor, y que él le había dicho estas cosas.
Y como fué tarde aquel día, el primero de la semana, y estando las puertas cerradas donde los discípulos estaban juntos por miedo de los Judíos, vino Jesús, y púsose en medio, y díjoles: Paz á vosotros.
Y como hubo dicho esto, mostróles las manos y el costado. Y los discípulos se gozaron viendo al Señor.
Entonces les dijo Jesús otra vez: Paz á vosotros; como me envió el Padre, así también yo os envío.
Y como hubo dicho esto, sopló, y díjoles: Tomad el Espíritu Santo:
A los que remitiereis los pecados, les son remitidos: á quienes los retuviereis, serán retenidos.
Empero Tomás, uno de los doce, que se dice el Dídimo, no estaba con ellos cuando Jesús vino.
Dijéronle pues los otros discípulos: Al Señor hemos visto. Y él les dijo: Si no viere en sus manos la señal de los clavos, y metiere mi dedo en el lugar de los clavos, y metiere mi mano en su costado, no creeré.
Y ocho días después, estaban otra vez sus discípulos dentro, y con ellos Tomás. Vino Jesús, las puertas cerradas, y púsose en medio, y dijo: Paz á vosotros.
Luego dice á Tomás: Mete tu dedo aquí, y ve mis manos: y alarga acá tu mano, y métela en mi costado: y no seas incrédulo, sino fiel.
Entonces Tomás respondió, y díjole: ¡Señor mío, y Dios mío!
Dícele Jesús: Porque me has visto, Tomás, creiste: bienaventurados los que no vieron y creyeron.
Y también hizo Jesús muchas otras señales en presencia de sus discípulos, que no están escritas en este libro.
Estas empero son escritas, para que creáis que Jesús es el Cristo, el Hijo de Dios; y para que creyendo, tengáis vida en su nombre.
Después se manifestó Jesús otra vez á sus discípulos en la mar de Tiberias; y manifestóse de esta manera.
Estaban juntos Simón Pedro, y Tomás, llamado el Dídimo, y Natanael, el que era de Caná de Galilea, y los hijos de Zebedeo, y otros dos de sus discípulos.
Díceles Simón: A pescar voy. Dícenle: Vamos nosotros también contigo. Fueron, y subieron en una barca; y aquella noche no cogieron nada.
Y venida la mañana, Jesús se puso á la ribera: mas los discípulos no entendieron que era Jesús.
Y díjoles: Mozos, ¿tenéis algo de comer? Respondiéronle: No.
Y él les dice: Echad la red á la mano derecha del barco, y hallaréis. Entonces la echaron, y no la podían en ninguna manera sacar, por la multitud de los peces.
Entonces aquel discípulo, al cual amaba Jesús, dijo á Pedro: El Señor es. Y Simón Pedro, como oyó que era el Señor, ciñóse la ropa, porque estaba desnudo, y echóse á la mar.
Y los otros discípulos vinieron con el barco (porque no estaban lejos de tierra sino como doscientos codos), trayendo la red de peces.
Y como descendieron á tierra, vieron ascuas puestas, y un pez encima de ellas, y pan.
Díceles Jesús: Traed de los peces que cogisteis ahora.
Subió Simón Pedro, y trajo la red á tierra, llena de grandes peces, ciento cincuenta y tres: y siendo tantos, la red no se rompió.
Díceles Jesús: Venid, comed. Y ninguno de los discípulos osaba preguntarle: ¿Tú, quién eres? sabiendo que era el Señor.
Viene pues Jesús, y toma el pan, y les da; y asimismo del pez.
Esta era ya la tercera vez que Jesús se manifestó á sus discípulos, habiendo resucitado de los muertos.
Y cuando hubieron comido, Jesús dijo á Simón Pedro: Simón, hijo de Jonás, ¿me amas más que éstos? Dícele: Sí, Señor: tú sabes que te amo. Dícele: Apacienta mis corderos.
Vuélvele á decir la segunda vez: Simón, hijo de Jonás, ¿me amas? Respóndele: Sí, Señor: tú sabes que te amo. Dícele: Apacienta mis ovejas.
Dícele la tercera vez: Simón, hijo de Jonás, ¿me amas? Entristecióse Pedro de que le dijese la tercera vez: ¿Me amas? y dícele: Señor, tú sabes todas las cosas; tú sabes que te amo. Dícele Jesús: Apacienta mis ovejas.
De cierto, de cierto te digo: Cuando eras más mozo, te ceñías, é ibas donde querías; mas cuando ya fueres viejo, extenderás tus manos, y te ceñirá otro, y te llevará á donde no quieras.
Y esto dijo, dando á entender con qué muerte había de glorificar á Dios. Y dicho esto, dícele: Sígueme.
Volviéndose Pedro, ve á aquel discípulo al cual amaba Jesús, que seguía, el que también se había recostado á su pecho en la cena, y le había dicho: Señor, ¿quién es el que te ha de entregar?
Así que Pedro vió á éste, dice á Jesús: Señor, ¿y éste, qué?
Dícele Jesús: Si quiero que él quede hasta que yo venga, ¿qué á tí? Sígueme tú.
Salió entonces este dicho entre los hermanos, que aquel discípulo no había de morir. Mas Jesús no le dijo, No morirá; sino: Si quiero que él quede hasta que yo venga ¿qué á ti?
Este es aquel discípulo que da testimonio de estas cosas, y escribió estas cosas: y sabemos que su testimonio es verdadero.
Y hay también otras muchas cosas que hizo Jesús, que si se escribiesen cada una por sí, ni aun en el mundo pienso que cabrían los libros que se habrían de escribir. Amén.
Y como se cumplieron los días de Pentecostés, estaban todos unánimes juntos;
Y de repente vino un estruendo del cielo como de un viento recio que corría, el cual hinchió toda la casa donde estaban sentados;
Y se les aparecieron lenguas repartidas, como de fuego, que se asentó sobre cada uno de ellos.
Y fueron todos llenos del Espíritu Santo, y comenzaron á hablar en otras lenguas, como el Espíritu les daba que hablasen.
Moraban entonces en Jerusalem Judíos, varones religiosos, de todas las naciones debajo del cielo.
Y hecho este estruendo, juntóse la multitud; y estaban confusos, porque cada uno les oía hablar su propia lengua.
Y estaban atónitos y maravillados, diciendo: He aquí ¿no son Galileos todos estos que hablan?
¿Cómo, pues, les oímos nosotros hablar cada uno en nuestra lengua en que somos nacidos?
Partos y Medos, y Elamitas, y los que habitamos en Mesopotamia, en Judea y en Capadocia, en el Ponto y en Asia,
En Phrygia y Pamphylia, en Egipto y en las partes de Africa que está de la otra parte de Cirene, y Romanos extranjeros, tanto Judíos como convertidos,
Cretenses y Arabes, les oímos hablar en nuestras lenguas las maravillas de Dios.
Y estaban todos atónitos y perplejos, diciendo los unos á los otros: ¿Qué quiere ser esto?
Mas otros burlándose, decían: Que están llenos de mosto.
Entonces Pedro, poniéndose en pie con los once, alzó su voz, y hablóles diciendo: Varones Judíos, y todos los que habitáis en Jerusalem, esto os sea notorio, y oid mis palabras.
Porque éstos no están borrachos, como vosotros pensáis, siendo la hora tercia del día;
Mas esto es lo que fué dicho por el profeta Joel:
Y será en los postreros días, dice Dios, derramaré de mi Espíritu sobre toda carne, y vuestros hijos y vuestras hijas profetizarán; y vuestros mancebos verán visiones, y vuestros viejos soñarán sueños:
Y de cierto sobre mis siervos y sobre mis siervas en aquellos días derramaré de mi Espíritu, y profetizarán.
Y daré prodigios arriba en el cielo, y señales abajo en la tierra, sangre y fuego y vapor de humo:
El sol se volverá en tinieblas, y la luna en sangre, antes que venga el día del Señor, grande y manifiesto;
Y será que todo aquel que invocare el nombre del Señor, será salvo.
Varones Israelitas, oid estas palabras: Jesús Nazareno, varón aprobado de Dios entre vosotros en maravillas y prodigios y señales, que Dios hizo por él en medio de vosotros, como también vosotros sabéis;
A éste, entregado por determinado consejo y providencia de Dios, prendisteis y matasteis por manos de los inicuos, crucificándole;
Al cual Dios levantó, sueltos los dolores de la muerte, por cuanto era imposible ser detenido de ella.
Porque David dice de él: Veía al Señor siempre delante de mí: porque está á mi diestra, no seré conmovido.
Por lo cual mi corazón se alegró, y gozóse mi lengua; y aun mi carne descansará en esperanza;
Que no dejarás mi alma en el infierno, ni darás á tu Santo que vea corrupción.
Hicísteme notorios los caminos de la vida; me henchirás de gozo con tu presencia.
Varones hermanos, se os puede libremente decir del patriarca David, que murió, y fué sepultado, y su sepulcro está con nosotros hasta del día de hoy.
Empero siendo profeta, y sabiendo que con juramento le había Dios jurado que del fruto de su lomo, cuanto á la carne, levantaría al Cristo que se sentaría sobre su trono;
Viéndolo antes, habló de la resurrección de Cristo, que su alma no fué dejada en el infierno, ni su carne vió corrupción.
A este Jesús resucitó Dios, de lo cual todos nosotros somos testigos.
Así que, levantado por la diestra de Dios, y recibiendo del Padre la promesa del Espíritu Santo, ha derramado esto que vosotros veis y oís.
Porque David no subió á los cielos; empero él dice: Dijo el Señor á mi Señor: Siéntate á mi diestra,
Hasta que ponga á tus enemigos por estrado de tus pies.
Sepa pues ciertísimamente toda la casa de Israel, que á éste Jesús que vosotros crucificasteis, Dios ha hecho Señor y Cristo.
Entonces oído esto, fueron compungidos de corazón, y dijeron á Pedro y á los otros apóstoles: Varones hermanos, ¿qué haremos?
Y Pedro les dice: Arrepentíos, y bautícese cada uno de vosotros en el nombre de Jesucristo para perdón de los pecados; y recibiréis el don del Espíritu Santo.
Porque para vosotros es la promesa, y para vuestros hijos, y para todos los que están lejos; para cuantos el Señor nuestro Dios llamare.
Y con otras muchas palabras testificaba y exhortaba, diciendo: Sed salvos de esta perversa generación.
Así que, los que recibieron su palabra, fueron bautizados: y fueron añadidas á ellos aquel día como tres mil personas.
Y perseveraban en la doctrina de los apóstoles, y en la comunión, y en el partimiento del pan, y en las oraciones.
Y toda persona tenía temor: y muchas maravillas y señales eran hechas por los apóstoles.
Y todos los que creían estaban juntos; y tenían todas las cosas comunes;
Y vendían las posesiones, y las haciendas, y repartíanlas á todos, como cada uno había menester.
Y perseverando unánimes cada día en el templo, y partiendo el pan en las casas, comían juntos con alegría y con sencillez de corazón,
Alabando á Dios, y teniendo gracia con todo el pueblo. Y el Señor añadía cada día á la iglesia los que habían de ser salvos.
Pedro y Juan subían juntos al templo á la hora de oración, la de nona.
Y un hombre que era cojo desde el vientre de su madre, era traído; al cual ponían cada día á la puerta del templo que se llama la Hermosa, para que pidiese limosna de los que entraban en el templo.
Este, como vió á Pedro y á Juan que iban á entrar en el templo, rogaba que le diesen limosna.
Y Pedro, con Juan, fijando los ojos en él, dijo: Mira á nosotros.
Entonces él estuvo atento á ellos, esperando recibir de ellos algo.
Y Pedro dijo: Ni tengo plata ni oro; mas lo que tengo te doy: en el nombre de Jesucristo de Nazaret, levántate y anda.
Y tomándole por la mano derecha le levantó: y luego fueron afirmados sus pies y tobillos;
Y saltando, se puso en pie, y anduvo; y entró con ellos en el templo, andando, y saltando, y alabando á Dios.
Y todo el pueblo le vió andar y alabar á Dios.
Y conocían que él era el que se sentaba á la limosna á la puerta del templo, la Hermosa: y fueron llenos de asombro y de espanto por lo que le había acontecido.
Y teniendo á Pedro y á Juan el cojo que había sido sanado, todo el pueblo concurrió á ellos al pórtico que se llama de Salomón, atónitos.
Y viendo esto Pedro, respondió al pueblo: Varones Israelitas, ¿por qué os maravilláis de esto? ó ¿por qué ponéis los ojos en nosotros, como si con nuestra virtud ó piedad hubiésemos hecho andar á éste?
El Dios de Abraham, y de Isaac, y de Jacob, el Dios de nuestros padres ha glorificado á su Hijo Jesús, al cual vosotros entregasteis, y negasteis delante de Pilato, juzgando él que había de ser suelto.
Mas vosotros al Santo y al Justo negasteis, y pedisteis que se os diese un homicida;
Y matasteis al Autor de la vida, al cual Dios ha resucitado de los muertos; de lo que nosotros somos testigos.
Y en la fe de su nombre, á éste que vosotros veis y conocéis, ha confirmado su nombre: y la fe que por él es, ha dado á éste esta completa sanidad en presencia de todos vosotros.
Mas ahora, hermanos, sé que por ignorancia lo habéis hecho, como también vuestros príncipes.
Empero Dios ha cumplido así lo que había antes anunciado por boca de todos sus profetas, que su Cristo había de padecer.
Así que, arrepentíos y convertíos, para que sean borrados vuestros pecados; pues que vendrán los tiempos del refrigerio de la presencia del Señor,
Y enviará á Jesucristo, que os fué antes anunciado:
Al cual de cierto es menester que el cielo tenga hasta los tiempos de la restauración de todas las cosas, que habló Dios por boca de sus santos profetas que han sido desde el siglo.
Porque Moisés dijo á los padres: El Señor vuestro Dios os levantará profeta de vuestros hermanos, como yo; á él oiréis en todas las cosas que os hablare.
Y será, que cualquiera alma que no oyere á aquel profeta, será desarraigada del pueblo.
Y todos los profetas desde Samuel y en adelante, todos los que han hablado, han anunciado estos días.
Vosotros sois los hijos de los profetas, y del pacto que Dios concertó con nuestros padres, diciendo á Abraham: Y en tu simiente serán benditas todas las familias de la tierra.
A vosotros primeramente, Dios, habiendo levantado á su Hijo, le envió para que os bendijese, á fin de que cada uno se convierta de su maldad.
Y hablando ellos al pueblo, sobrevinieron los sacerdotes, y el magistrado del templo, y los Saduceos,
Resentidos de que enseñasen al pueblo, y anunciasen en Jesús la resurrección de los muertos.
Y les echaron mano, y los pusieron en la cárcel hasta el día siguiente; porque era ya tarde.
Mas muchos de los que habían oído la palabra, creyeron; y fué el número de los varones como cinco mil.
Y aconteció al día siguiente, que se juntaron en Jerusalem los príncipes de ellos, y los ancianos, y los escribas;
Y Anás, príncipe de los sacerdotes, y Caifás, y Juan y Alejandro, y todos los que eran del linaje sacerdotal;
Y haciéndolos presentar en medio, les preguntaron: ¿Con qué potestad, ó en qué nombre, habéis hecho vosotros esto?
Entonces Pedro, lleno del Espíritu Santo, les dijo: Príncipes del pueblo, y ancianos de Israel:
Pues que somos hoy demandados acerca del beneficio hecho á un hombre enfermo, de qué manera éste haya sido sanado,
Sea notorio á todos vosotros, y á todo el pueblo de Israel, que en el nombre de Jesucristo de Nazaret, al que vosotros crucificasteis y Dios le resucitó de los muertos, por él este hombre está en vuestra presencia sano.
Este es la piedra reprobada de vosotros los edificadores, la cual es puesta por cabeza del ángulo.
Y en ningún otro hay salud; porque no hay otro nombre debajo del cielo, dado á los hombres, en que podamos ser salvos.
Entonces viendo la constancia de Pedro y de Juan, sabido que eran hombres sin letras é ignorantes, se maravillaban; y les conocían que habían estado con Jesús.
Y viendo al hombre que había sido sanado, que estaba con ellos, no podían decir nada en contra.
Mas les mandaron que se saliesen fuera del concilio; y conferían entre sí,
Diciendo: ¿Qué hemos de hacer á estos hombres? porque de cierto, señal manifiesta ha sido hecha por ellos, notoria á todos los que moran en Jerusalem, y no lo podemos negar.
Todavía, porque no se divulgue más por el pueblo, amenacémoslos que no hablen de aquí adelante á hombre alguno en este nombre.
Y llamándolos, les intimaron que en ninguna manera hablasen ni enseñasen en el nombre de Jesús.
Entonces Pedro y Juan, respondiendo, les dijeron: Juzgad si es justo delante de Dios obedecer antes á vosotros que á Dios:
Porque no podemos dejar de decir lo que hemos visto y oído.
Ellos entonces los despacharon amenazándolos, no hallando ningún modo de castigarlos, por causa del pueblo; porque todos glorificaban á Dios de lo que había sido hecho.
Porque el hombre en quien había sido hecho este milagro de sanidad, era de más de cuarenta años.
Y sueltos, vinieron á los suyos, y contaron todo lo que los príncipes de los sacerdotes y los ancianos les habían dicho.
Y ellos, habiéndolo oído, alzaron unánimes la voz á Dios, y dijeron: Señor, tú eres el Dios que hiciste el cielo y la tierra, la mar, y todo lo que en ellos hay;
Que por boca de David, tu siervo, dijiste: ¿Por qué han bramado las gentes, y los pueblos han pensado cosas vanas?
Asistieron los reyes de la tierra, y los príncipes se juntaron en uno contra el Señor, y contra su Cristo.
Porque verdaderamente se juntaron en esta ciudad contra tu santo Hijo Jesús, al cual ungiste, Herodes y Poncio Pilato, con los Gentiles y los pueblos de Israel,
Para hacer lo que tu mano y tu consejo habían antes determinado que había de ser hecho.
Y ahora, Señor, mira sus amenazas, y da á tus siervos que con toda confianza hablen tu palabra;
Que extiendas tu mano á que sanidades, y milagros, y prodigios sean hechos por el nombre de tu santo Hijo Jesús.
Y como hubieron orado, el lugar en que estaban congregados tembló; y todos fueron llenos del Espíritu Santo, y hablaron la palabra de Dios con confianza.
Y la multitud de los que habían creído era de un corazón y un alma: y ninguno decía ser suyo algo de lo que poseía; mas todas las cosas les eran comunes.
Y los apóstoles daban testimonio de la resurrección del Señor Jesús con gran esfuerzo; y gran gracia era en todos ellos.
Que ningún necesitado había entre ellos: porque todos los que poseían heredades ó casas, vendiéndolas, traían el precio de lo vendido,
Y lo ponían á los pies de los apóstoles; y era repartido á cada uno según que había menester.
Entonces José, que fué llamado de los apóstoles por sobrenombre, Bernabé, (que es interpretado, Hijo de consolación) Levita, natural de Cipro,
Como tuviese una heredad, la vendió, y trajo el precio, y púsolo á los pies de los apóstoles.
Mas un varón llamado Ananías, con Safira su mujer, vendió una posesión,
Y defraudó del precio, sabiéndolo también su mujer; y trayendo una parte, púsola á los pies de los apóstoles.
Y dijo Pedro: Ananías, ¿por qué ha llenado Satanás tu corazón á que mintieses al Espíritu Santo, y defraudases del precio de la heredad?
Reteniéndola, ¿no se te quedaba á ti? y vendida, ¿no estaba en tu potestad? ¿Por qué pusiste esto en tu corazón? No has mentido á los hombres, sino á Dios.
Entonces Ananías, oyendo estas palabras, cayó y espiró. Y vino un gran temor sobre todos los que lo oyeron.
Y levantándose los mancebos, le tomaron, y sacándolo, sepultáronlo.
Y pasado espacio como de tres horas, sucedió que entró su mujer, no sabiendo lo que había acontecido.
Entonces Pedro le dijo: Dime: ¿vendisteis en tanto la heredad? Y ella dijo: Sí, en tanto.
Y Pedro le dijo: ¿Por qué os concertasteis para tentar al Espíritu del Señor? He aquí á la puerta los pies de los que han sepultado á tu marido, y te sacarán.
Y luego cayó á los pies de él, y espiró: y entrados los mancebos, la hallaron muerta; y la sacaron, y la sepultaron junto á su marido.
Y vino un gran temor en toda la iglesia, y en todos los que oyeron estas cosas.
Y por las manos de los apóstoles eran hechos muchos milagros y prodigios en el pueblo; y estaban todos unánimes en el pórtico de Salomón.
Y de los otros, ninguno osaba juntarse con ellos; mas el pueblo los alababa grandemente.
Y los que creían en el Señor se aumentaban más, gran número así de hombres como de mujeres;
Tanto que echaban los enfermos por las calles, y los ponían en camas y en lechos, para que viniendo Pedro, á lo menos su sombra tocase á alguno de ellos.
Y aun de las ciudades vecinas concurría multitud á Jerusalem, trayendo enfermos y atormentados de espíritus inmundos; los cuales todos eran curados.
Entonces levantándose el príncipe de los sacerdotes, y todos los que estaban con él, que es la secta de los Saduceos, se llenaron de celo;
Y echaron mano á los apóstoles, y pusiéronlos en la cárcel pública.
Mas el ángel del Señor, abriendo de noche las puertas de la cárcel, y sacándolos, dijo:
Id, y estando en el templo, hablad al pueblo todas las palabras de esta vida.
Y oído que hubieron esto, entraron de mañana en el templo, y enseñaban. Entre tanto, viniendo el príncipe de los sacerdotes, y los que eran con él, convocaron el concilio, y á todos los ancianos de los hijos de Israel, y enviaron á la cárcel para que fuesen traídos.
Mas como llegaron los ministros, y no los hallaron en la cárcel, volvieron, y dieron aviso,
Diciendo: Por cierto, la cárcel hemos hallado cerrada con toda seguridad, y los guardas que estaban delante de las puertas; mas cuando abrimos, á nadie hallamos dentro.
Y cuando oyeron estas palabras el pontífice y el magistrado del templo y los príncipes de los sacerdotes, dudaban en qué vendría á parar aquello.
Pero viniendo uno, dióles esta noticia: He aquí, los varones que echasteis en la cárcel, están en el templo, y enseñan al pueblo.
Entonces fué el magistrado con los ministros, y trájolos sin violencia; porque temían del pueblo ser apedreados.
Y como los trajeron, los presentaron en el concilio: y el príncipe de los sacerdotes les preguntó,
Diciendo: ¿No os denunciamos estrechamente, que no enseñaseis en este nombre? y he aquí, habéis llenado á Jerusalem de vuestra doctrina, y queréis echar sobre nosotros la sangre de este hombre.
Y respondiendo Pedro y los apóstoles, dijeron: Es menester obedecer á Dios antes que á los hombres.
El Dios de nuestros padres levantó á Jesús, al cual vosotros matasteis colgándole en un madero.
A éste ha Dios ensalzado con su diestra por Príncipe y Salvador, para dar á Israel arrepentimiento y remisión de pecados.
Y nosotros somos testigos suyos de estas cosas, y también el Espíritu Santo, el cual ha dado Dios á los que le obedecen.
Ellos, oyendo esto, regañaban, y consultaban matarlos.
Entonces levantándose en el concilio un Fariseo llamado Gamaliel, doctor de la ley, venerable á todo el pueblo, mandó que sacasen fuera un poco á los apóstoles.
Y les dijo: Varones Israelitas, mirad por vosotros acerca de estos hombres en lo que habéis de hacer.
Porque antes de estos días se levantó Teudas, diciendo que era alguien; al que se agregó un número de hombres como cuatrocientos: el cual fué matado; y todos los que le creyeron fueron dispersos, y reducidos á nada.
Después de éste, se levantó Judas el Galileo en los días del empadronamiento, y llevó mucho pueblo tras sí. Pereció también aquél; y todos los que consintieron con él, fueron derramados.
Y ahora os digo: Dejaos de estos hombres, y dejadlos; porque si este consejo ó esta obra es de los hombres, se desvanecerá:
Mas si es de Dios, no la podréis deshacer; no seáis tal vez hallados resistiendo á Dios.
Y convinieron con él: y llamando á los apóstoles, después de azotados, les intimaron que no hablasen en el nombre de Jesús, y soltáronlos.
Y ellos partieron de delante del concilio, gozosos de que fuesen tenidos por dignos de padecer afrenta por el Nombre.
Y todos los días, en el templo y por las casas, no cesaban de enseñar y predicar á Jesucristo.
El príncipe de los sacerdotes dijo entonces: ¿Es esto así?
Y él dijo: Varones hermanos y padres, oid: El Dios de la gloria apareció á nuestro padre Abraham, estando en Mesopotamia, antes que morase en Chârán,
Y le dijo: Sal de tu tierra y de tu parentela, y ven á la tierra que te mostraré.
Entonces salió de la tierra de los Caldeos, y habitó en Chârán: y de allí, muerto su padre, le traspasó á esta tierra, en la cual vosotros habitáis ahora;
Y no le dió herencia en ella, ni aun para asentar un pie: mas le prometió que se la daría en posesión, y á su simiente después de él, no teniendo hijo.
Y hablóle Dios así: Que su simiente sería extranjera en tierra ajena, y que los reducirían á servidumbre y maltratarían, por cuatrocientos años.
Mas yo juzgaré, dijo Dios, la nación á la cual serán siervos: y después de esto saldrán y me servirán en este lugar.
Y dióle el pacto de la circuncisión: y así Abraham engendró á Isaac, y le circuncidó al octavo día; é Isaac á Jacob, y Jacob á los doce patriarcas.
Y los patriarcas, movidos de envidia, vendieron á José para Egipto; mas Dios era con él,
Y le libró de todas sus tribulaciones, y le dió gracia y sabiduría en la presencia de Faraón, rey de Egipto, el cual le puso por gobernador sobre Egipto, y sobre toda su casa.
Vino entonces hambre en toda la tierra de Egipto y de Canaán, y grande tribulación; y nuestros padres no hallaban alimentos.
Y como oyese Jacob que había trigo en Egipto, envió á nuestros padres la primera vez.
Y en la segunda, José fué conocido de sus hermanos, y fué sabido de Faraón el linaje de José.
Y enviando José, hizo venir á su padre Jacob, y á toda su parentela, en número de setenta y cinco personas.
Así descendió Jacob á Egipto, donde murió él y nuestros padres;
Los cuales fueron trasladados á Sichêm, y puestos en el sepulcro que compró Abraham á precio de dinero de los hijos de Hemor de Sichêm.
Mas como se acercaba el tiempo de la promesa, la cual Dios había jurado á Abraham, el pueblo creció y multiplicóse en Egipto,
Hasta que se levantó otro rey en Egipto que no conocía á José.
Este, usando de astucia con nuestro linaje, maltrató á nuestros padres, á fin de que pusiesen á peligro de muerte sus niños, para que cesase la generación.
En aquel mismo tiempo nació Moisés, y fué agradable á Dios: y fué criado tres meses en casa de su padre.
Mas siendo puesto al peligro, la hija de Faraón le tomó, y le crió como á hijo suyo.
Y fué enseñado Moisés en toda la sabiduría de los egipcios; y era poderoso en sus dichos y hechos.
Y cuando hubo cumplido la edad de cuarenta años, le vino voluntad de visitar á sus hermanos los hijos de Israel.
Y como vió á uno que era injuriado, defendióle, é hiriendo al Egipcio, vengó al injuriado.
Pero él pensaba que sus hermanos entendían que Dios les había de dar salud por su mano; mas ellos no lo habían entendido.
Y al día siguiente, riñendo ellos, se les mostró, y los ponía en paz, diciendo: Varones, hermanos sois, ¿por qué os injuriáis los unos á los otros?
Entonces el que injuriaba á su prójimo, le rempujó, diciendo: ¿Quién te ha puesto por príncipe y juez sobre nosotros?
¿Quieres tú matarme, como mataste ayer al Egipcio?
A esta palabra Moisés huyó, y se hizo extranjero en tierra de Madián, donde engendró dos hijos.
Y cumplidos cuarenta años, un ángel le apareció en el desierto del monte Sina, en fuego de llama de una zarza.
Entonces Moisés mirando, se maravilló de la visión: y llegándose para considerar, fué hecha á él voz del Señor:
Yo soy el Dios de tus padres, el Dios de Abraham, y el Dios de Isaac, y el Dios de Jacob. Mas Moisés, temeroso, no osaba mirar.
Y le dijo el Señor: Quita los zapatos de tus pies, porque el lugar en que estás es tierra santa.
He visto, he visto la aflicción de mi pueblo que está en Egipto, y he oído el gemido de ellos, y he descendido para librarlos. Ahora pues, ven, te enviaré á Egipto.
A este Moisés, al cual habían rehusado, diciendo: ¿Quién te ha puesto por príncipe y juez? á éste envió Dios por príncipe y redentor con la mano del ángel que le apareció en la zarza.
Este los sacó, habiendo hecho prodigios y milagros en la tierra de Egipto, y en el mar Bermejo, y en el desierto por cuarenta años.
Este es el Moisés, el cual dijo á los hijos de Israel: Profeta os levantará el Señor Dios vuestro de vuestros hermanos, como yo; á él oiréis.
Este es aquél que estuvo en la congregación en el desierto con el ángel que le hablaba en el monte Sina, y con nuestros padres; y recibió las palabras de vida para darnos:
Al cual nuestros padres no quisieron obedecer; antes le desecharon, y se apartaron de corazón á Egipto,
Diciendo á Aarón: Haznos dioses que vayan delante de nosotros; porque á este Moisés, que nos sacó de tierra de Egipto, no sabemos qué le ha acontecido.
Y entonces hicieron un becerro, y ofrecieron sacrificio al ídolo, y en las obras de sus manos se holgaron.
Y Dios se apartó, y los entregó que sirviesen al ejército del cielo; como está escrito en el libro de los profetas: ¿Me ofrecisteis víctimas y sacrificios en el desierto por cuarenta años, casa de Israel?
Antes, trajisteis el tabernáculo de Moloch, y la estrella de vuestro dios Remphan: figuras que os hicisteis para adorarlas: os transportaré pues, más allá de Babilonia.
Tuvieron nuestros padres el tabernáculo del testimonio en el desierto, como había ordenado Dios, hablando á Moisés que lo hiciese según la forma que había visto.
El cual recibido, metieron también nuestros padres con Josué en la posesión de los Gentiles, que Dios echó de la presencia de nuestros padres, hasta los días de David;
El cual halló gracia delante de Dios, y pidió hallar tabernáculo para el Dios de Jacob.
Mas Salomón le edificó casa.
Si bien el Altísimo no habita en templos hechos de mano; como el profeta dice:
El cielo es mi trono, y la tierra es el estrado de mis pies. ¿Qué casa me edificaréis? dice el Señor; ¿ó cuál es el lugar de mi reposo?
¿No hizo mi mano todas estas cosas?
Duros de cerviz, é incircuncisos de corazón y de oídos, vosotros resistís siempre al Espíritu Santo: como vuestros padres, así también vosotros.
¿A cuál de los profetas no persiguieron vuestros padres? y mataron á los que antes anunciaron la venida del Justo, del cual vosotros ahora habéis sido entregadores y matadores;
Que recibisteis la ley por disposición de ángeles, y no la guardasteis.
Y oyendo estas cosas, regañaban de sus corazones, y crujían los dientes contra él.
Mas él, estando lleno de Espíritu Santo, puestos los ojos en el cielo, vió la gloria de Dios, y á Jesús que estaba á la diestra de Dios,
Y dijo: He aquí, veo los cielos abiertos, y al Hijo del hombre que está á la diestra de Dios.
Entonces dando grandes voces, se taparon sus oídos, y arremetieron unánimes contra él;
Y echándolo fuera de la ciudad, le apedreaban: y los testigos pusieron sus vestidos á los pies de un mancebo que se llamaba Saulo.
Y apedrearon á Esteban, invocando él y diciendo: Señor Jesús, recibe mi espíritu.
Y puesto de rodillas, clamó á gran voz: Señor, no les imputes este pecado. Y habiendo dicho esto, durmió.
Y saulo consentía en su muerte. Y en aquel día se hizo una grande persecución en la iglesia que estaba en Jerusalem; y todos fueron esparcidos por las tierras de Judea y de Samaria, salvo los apóstoles.
Y llevaron á enterrar á Esteban varones piadosos, é hicieron gran llanto sobre él.
Entonces Saulo asolaba la iglesia, entrando por las casas: y trayendo hombres y mujeres, los entregaba en la cárcel.
Mas los que fueron esparcidos, iban por todas partes anunciando la palabra.
Entonces Felipe, descendiendo á la ciudad de Samaria, les predicaba á Cristo.
Y las gentes escuchaban atentamente unánimes las cosas que decía Felipe, oyendo y viendo las señales que hacía.
Porque de muchos que tenían espíritus inmundos, salían éstos dando grandes voces; y muchos paralíticos y cojos eran sanados:
Así que había gran gozo en aquella ciudad.
Y había un hombre llamado Simón, el cual había sido antes mágico en aquella ciudad, y había engañado la gente de Samaria, diciéndose ser algún grande:
Al cual oían todos atentamente desde el más pequeño hasta el más grande, diciendo: Este es la gran virtud de Dios.
Y le estaban atentos, porque con sus artes mágicas los había embelesado mucho tiempo.
Mas cuando creyeron á Felipe, que anunciaba el evangelio del reino de Dios y el nombre de Jesucristo, se bautizaban hombres y mujeres.
El mismo Simón creyó también entonces, y bautizándose, se llegó á Felipe: y viendo los milagros y grandes maravillas que se hacían, estaba atónito.
Y los apóstoles que estaban en Jerusalem, habiendo oído que Samaria había recibido la palabra de Dios, les enviaron á Pedro y á Juan:
Los cuales venidos, oraron por ellos, para que recibiesen el Espíritu Santo;
(Porque aun no había descendido sobre ninguno de ellos, mas solamente eran bautizados en el nombre de Jesús.)
Entonces les impusieron las manos, y recibieron el Espíritu Santo.
Y como vió Simón que por la imposición de las manos de los apóstoles se daba el Espíritu Santo, les ofreció dinero,
Diciendo: Dadme también á mí esta potestad, que á cualquiera que pusiere las manos encima, reciba el Espíritu Santo.
Entonces Pedro le dijo: Tu dinero perezca contigo, que piensas que el don de Dios se gane por dinero.
No tienes tú parte ni suerte en este negocio; porque tu corazón no es recto delante de Dios.
Arrepiéntete pues de esta tu maldad, y ruega á Dios, si quizás te será perdonado el pensamiento de tu corazón.
Porque en hiel de amargura y en prisión de maldad veo que estás.
Respondiendo entonces Simón, dijo: Rogad vosotros por mí al Señor, que ninguna cosa de estas que habéis dicho, venga sobre mí.
Y ellos, habiendo testificado y hablado la palabra de Dios, se volvieron á Jerusalem, y en muchas tierras de los Samaritanos anunciaron el evangelio.
Empero el ángel del Señor habló á Felipe, diciendo: Levántate y ve hacia el mediodía, al camino que desciende de Jerusalem á Gaza, el cual es desierto.
Entonces él se levantó, y fué: y he aquí un Etiope, eunuco, gobernador de Candace, reina de los Etiopes, el cual era puesto sobre todos sus tesoros, y había venido á adorar á Jerusalem,
Se volvía sentado en su carro, y leyendo el profeta Isaías.
Y el Espíritu dijo á Felipe: Llégate, y júntate á este carro.
Y acudiendo Felipe, le oyó que leía el profeta Isaías, y dijo: Mas ¿entiendes lo que lees?
Y él dijo: ¿Y cómo podré, si alguno no me enseñare? Y rogó á Felipe que subiese, y se sentase con él.
Y el lugar de la Escritura que leía, era éste: Como oveja á la muerte fué llevado; y como cordero mudo delante del que le trasquila, así no abrió su boca:
En su humillación su juicio fué quitado: mas su generación, ¿quién la contará? porque es quitada de la tierra su vida.
Y respondiendo el eunuco á Felipe, dijo: Ruégote ¿de quién el profeta dice esto? ¿de sí, ó de otro alguno?
Entonces Felipe, abriendo su boca, y comenzando desde esta escritura, le anunció el evangelio de Jesús.
Y yendo por el camino, llegaron á cierta agua; y dijo el eunuco: He aquí agua; ¿qué impide que yo sea bautizado?
Y mandó parar el carro: y descendieron ambos al agua, Felipe y el eunuco; y bautizóle.
Y como subieron del agua, el Espíritu del Señor arrebató á Felipe; y no le vió más el eunuco, y se fué por su camino gozoso.
Felipe empero se halló en Azoto: y pasando, anunciaba el evangelio en todas las ciudades, hasta que llegó á Cesarea.
Y saulo, respirando aún amenazas y muerte contra los discípulos del Señor, vino al príncipe de los sacerdotes,
Y demandó de él letras para Damasco á las sinagogas, para que si hallase algunos hombres ó mujeres de esta secta, los trajese presos á Jerusalem.
Y yendo por el camino, aconteció que llegando cerca de Damasco, súbitamente le cercó un resplandor de luz del cielo;
Y cayendo en tierra, oyó una voz que le decía: Saulo, Saulo, ¿por qué me persigues?
Y él dijo: ¿Quién eres, Señor? Y él dijo: Yo soy Jesús á quien tú persigues: dura cosa te es dar coces contra el aguijón.
El, temblando y temeroso, dijo: Señor, ¿qué quieres que haga? Y el Señor le dice: Levántate y entra en la ciudad, y se te dirá lo que te conviene hacer.
Y los hombres que iban con Saulo, se pararon atónitos, oyendo á la verdad la voz, mas no viendo á nadie.
Entonces Saulo se levantó de tierra, y abriendo los ojos, no veía á nadie: así que, llevándole por la mano, metiéronle en Damasco;
Donde estuvo tres días sin ver, y no comió, ni bebió.
Había entonces un discípulo en Damasco llamado Ananías, al cual el Señor dijo en visión: Ananías. Y él respondió: Heme aquí, Señor.
Y el Señor le dijo: Levántate, y ve á la calle que se llama la Derecha, y busca en casa de Judas á uno llamado Saulo, de Tarso: porque he aquí, él ora;
Y ha visto en visión un varón llamado Ananías, que entra y le pone la mano encima, para que reciba la vista.
Entonces Ananías respondió: Señor, he oído á muchos acerca de este hombre, cuántos males ha hecho á tus santos en Jerusalem:
Y aun aquí tiene facultad de los príncipes de los sacerdotes de prender á todos los que invocan tu nombre.
Y le dijo el Señor: Ve: porque instrumento escogido me es éste, para que lleve mi nombre en presencia de los Gentiles, y de reyes, y de los hijos de Israel:
Porque yo le mostraré cuánto le sea menester que padezca por mi nombre.
Ananías entonces fué, y entró en la casa, y poniéndole las manos encima, dijo: Saulo hermano, el Señor Jesús, que te apareció en el camino por donde venías, me ha enviado para que recibas la vista y seas lleno de Espíritu Santo.
Y luego le cayeron de los ojos como escamas, y recibió al punto la vista: y levantándose, fué bautizado.
Y como comió, fué confortado. Y estuvo Saulo por algunos días con los discípulos que estaban en Damasco.
Y luego en las sinagogas predicaba á Cristo, diciendo que éste era el Hijo de Dios.
Y todos los que le oían estaban atónitos, y decían: ¿No es éste el que asolaba en Jerusalem á los que invocaban este nombre, y á eso vino acá, para llevarlos presos á los príncipes de los sacerdotes?
Empero Saulo mucho más se esforzaba, y confundía á los Judíos que moraban en Damasco, afirmando que éste es el Cristo.
Y como pasaron muchos días, los Judíos hicieron entre sí consejo de matarle;
Mas las asechanzas de ellos fueron entendidas de Saulo. Y ellos guardaban las puertas de día y de noche para matarle.
Entonces los discípulos, tomándole de noche, le bajaron por el muro en una espuerta.
Y como vino á Jerusalem, tentaba de juntarse con los discípulos; mas todos tenían miedo de él, no creyendo que era discípulo.
Entonces Bernabé, tomándole, lo trajo á los apóstoles, y contóles cómo había visto al Señor en el camino, y que le había hablado, y cómo en Damasco había hablado confiadamente en el nombre de Jesús.
Y entraba y salía con ellos en Jerusalem;
Y hablaba confiadamente en el nombre del Señor: y disputaba con los Griegos; mas ellos procuraban matarle.
Lo cual, como los hermanos entendieron, le acompañaron hasta Cesarea, y le enviaron á Tarso.
Las iglesias entonces tenían paz por toda Judea y Galilea y Samaria, y eran edificadas, andando en el temor del Señor; y con consuelo del Espíritu Santo eran multiplicadas.
Y aconteció que Pedro, andándolos á todos, vino también á los santos que habitaban en Lydda.
Y halló allí á uno que se llamaba Eneas, que hacía ocho años que estaba en cama, que era paralítico.
Y le dijo Pedro: Eneas, Jesucristo te sana; levántate, y hazte tu cama. Y luego se levantó.
Y viéronle todos los que habitaban en Lydda y en Sarona, los cuales se convirtieron al Señor.
Entonces en Joppe había una discípula llamada Tabita, que si lo declaras, quiere decir Dorcas. Esta era llena de buenas obras y de limosnas que hacía.
Y aconteció en aquellos días que enfermando, murió; á la cual, después de lavada, pusieron en una sala.
Y como Lydda estaba cerca de Joppe, los discípulos, oyendo que Pedro estaba allí, le enviaron dos hombres, rogándole: No te detengas en venir hasta nosotros.
Pedro entonces levantándose, fué con ellos: y llegado que hubo, le llevaron á la sala, donde le rodearon todas las viudas, llorando y mostrando las túnicas y los vestidos que Dorcas hacía cuando estaba con ellas.
Entonces echados fuera todos, Pedro puesto de rodillas, oró; y vuelto al cuerpo, dijo: Tabita, levántate. Y ella abrió los ojos, y viendo á Pedro, incorporóse.
Y él le dió la mano, y levantóla: entonces llamando á los santos y las viudas, la presentó viva.
Esto fué notorio por toda Joppe; y creyeron muchos en el Señor.
Y aconteció que se quedó muchos días en Joppe en casa de un cierto Simón, curtidor.
Y había un varón en Cesarea llamado Cornelio, centurión de la compañía que se llamaba la Italiana,
Pío y temeroso de Dios con toda su casa, y que hacía muchas limosnas al pueblo, y oraba á Dios siempre.
Este vió en visión manifiestamente, como á la hora nona del día, que un ángel de Dios entraba á él, y le decía: Cornelio.
Y él, puestos en él los ojos, espantado, dijo: ¿Qué es, Señor? Y díjole: Tus oraciones y tus limosnas han subido en memoria á la presencia de Dios.
Envía pues ahora hombres á Joppe, y haz venir á un Simón, que tiene por sobrenombre Pedro.
Este posa en casa de un Simón, curtidor, que tiene su casa junto á la mar: él te dirá lo que te conviene hacer.
E ido el ángel que hablaba con Cornelio, llamó dos de sus criados, y un devoto soldado de los que le asistían;
A los cuales, después de habérselo contado todo, los envió á Joppe.
Y al día siguiente, yendo ellos su camino, y llegando cerca de la ciudad, Pedro subió á la azotea á orar, cerca de la hora de sexta;
Y aconteció que le vino una grande hambre, y quiso comer; pero mientras disponían, sobrevínole un éxtasis;
Y vió el cielo abierto, y que descendía un vaso, como un gran lienzo, que atado de los cuatro cabos era bajado á la tierra;
En el cual había de todos los animales cuadrúpedos de la tierra, y reptiles, y aves del cielo.
Y le vino una voz: Levántate, Pedro, mata y come.
Entonces Pedro dijo: Señor, no; porque ninguna cosa común é inmunda he comido jamás.
Y volvió la voz hacia él la segunda vez: Lo que Dios limpió, no lo llames tú común.
Y esto fué hecho por tres veces; y el vaso volvió á ser recogido en el cielo.
Y estando Pedro dudando dentro de sí qué sería la visión que había visto, he aquí, los hombres que habían sido enviados por Cornelio, que, preguntando por la casa de Simón, llegaron á la puerta.
Y llamando, preguntaron si un Simón que tenía por sobrenombre Pedro, posaba allí.
Y estando Pedro pensando en la visión, le dijo el Espíritu: He aquí, tres hombres te buscan.
Levántate, pues, y desciende, y no dudes ir con ellos; porque yo los he enviado.
Entonces Pedro, descendiendo á los hombres que eran enviados por Cornelio, dijo: He aquí, yo soy el que buscáis: ¿cuál es la causa por la que habéis venido?
Y ellos dijeron: Cornelio, el centurión, varón justo y temeroso de Dios, y que tiene testimonio de toda la nación de los Judíos, ha recibido respuesta por un santo ángel, de hacerte venir á su casa, y oir de ti palabras.
Entonces metiéndolos dentro, los hospedó. Y al día siguiente, levantándose, se fué con ellos; y le acompañaron algunos de los hermanos de Joppe.
Y al otro día entraron en Cesarea. Y Cornelio los estaba esperando, habiendo llamado á sus parientes y los amigos más familiares.
Y como Pedro entró, salió Cornelio á recibirle; y derribándose á sus pies, adoró.
Mas Pedro le levantó, diciendo: Levántate; yo mismo también soy hombre.
Y hablando con él, entró, y halló á muchos que se habían juntado.
Y les dijo: Vosotros sabéis que es abominable á un varón Judío juntarse ó llegarse á extranjero; mas me ha mostrado Dios que á ningún hombre llame común ó inmundo;
Por lo cual, llamado, he venido sin dudar. Así que pregunto: ¿por qué causa me habéis hecho venir?
Entonces Cornelio dijo: Cuatro días ha que á esta hora yo estaba ayuno; y á la hora de nona estando orando en mi casa, he aquí, un varón se puso delante de mí en vestido resplandeciente.
Y dijo: Cornelio, tu oración es oída, y tus limosnas han venido en memoria en la presencia de Dios.
Envía pues á Joppe, y haz venir á un Simón, que tiene por sobrenombre Pedro; éste posa en casa de Simón, curtidor, junto á la mar; el cual venido, te hablará.
Así que, luego envié á ti; y tú has hecho bien en venir. Ahora pues, todos nosotros estamos aquí en la presencia de Dios, para oir todo lo que Dios te ha mandado.
Entonces Pedro, abriendo su boca, dijo: Por verdad hallo que Dios no hace acepción de personas;
Sino que de cualquiera nación que le teme y obra justicia, se agrada.
Envió palabra Dios á los hijos de Israel, anunciando la paz por Jesucristo; éste es el Señor de todos.
Vosotros sabéis lo que fué divulgado por toda Judea; comenzando desde Galilea después del bautismo que Juan predicó,
Cuanto á Jesús de Nazaret; cómo le ungió Dios de Espíritu Santo y de potencia; el cual anduvo haciendo bienes, y sanando á todos los oprimidos del diablo; porque Dios era con él.
Y nosotros somos testigos de todas las cosas que hizo en la tierra de Judea, y en Jerusalem; al cual mataron colgándole en un madero.
A éste levantó Dios al tercer día, é hizo que apareciese manifiesto,
No á todo el pueblo, sino á los testigos que Dios antes había ordenado, es á saber, á nosotros que comimos y bebimos con él, después que resucitó de los muertos.
Y nos mandó que predicásemos al pueblo, y testificásemos que él es el que Dios ha puesto por Juez de vivos y muertos.
A éste dan testimonio todos los profetas, de que todos los que en él creyeren, recibirán perdón de pecados por su nombre.
Estando aún hablando Pedro estas palabras, el Espíritu Santo cayó sobre todos los que oían el sermón.
Y se espantaron los fieles que eran de la circuncisión, que habían venido con Pedro, de que también sobre los Gentiles se derramase el don del Espíritu Santo.
Porque los oían que hablaban en lenguas, y que magnificaban á Dios.
Entonces respondió Pedro: ¿Puede alguno impedir el agua, para que no sean bautizados éstos que han recibido el Espíritu Santo también como nosotros?
Y les mandó bautizar en el nombre del Señor Jesús. Entonces le rogaron que se quedase por algunos días.
Y en el mismo tiempo el rey Herodes echó mano á maltratar algunos de la iglesia.
Y mató á cuchillo á Jacobo, hermano de Juan.
Y viendo que había agradado á los Judíos, pasó adelante para prender también á Pedro. Eran entonces los días de los ázimos.
Y habiéndole preso, púsole en la cárcel, entregándole á cuatro cuaterniones de soldados que le guardasen; queriendo sacarle al pueblo después de la Pascua.
Así que, Pedro era guardado en la cárcel; y la iglesia hacía sin cesar oración á Dios por él.
Y cuando Herodes le había de sacar, aquella misma noche estaba Pedro durmiendo entre dos soldados, preso con dos cadenas, y los guardas delante de la puerta, que guardaban la cárcel.
Y he aquí, el ángel del Señor sobrevino, y una luz resplandeció en la cárcel; é hiriendo á Pedro en el lado, le despertó, diciendo: Levántate prestamente. Y las cadenas se le cayeron de las manos.
Y le dijo el ángel: Cíñete, y átate tus sandalias. Y lo hizo así. Y le dijo: Rodéate tu ropa, y sígueme.
Y saliendo, le seguía; y no sabía que era verdad lo que hacía el ángel, mas pensaba que veía visión.
Y como pasaron la primera y la segunda guardia, vinieron á la puerta de hierro que va á la ciudad, la cual se les abrió de suyo: y salidos, pasaron una calle; y luego el ángel se apartó de él.
Entonces Pedro, volviendo en sí, dijo: Ahora entiendo verdaderamente que el Señor ha enviado su ángel, y me ha librado de la mano de Herodes, y de todo el pueblo de los Judíos que me esperaba.
Y habiendo considerado esto, llegó á casa de María la madre de Juan, el que tenía por sobrenombre Marcos, donde muchos estaban juntos orando.
Y tocando Pedro á la puerta del patio, salió una muchacha, para escuchar, llamada Rhode:
La cual como conoció la voz de Pedro, de gozo no abrió el postigo, sino corriendo adentro, dió nueva de que Pedro estaba al postigo.
Y ellos le dijeron: Estás loca. Mas ella afirmaba que así era. Entonces ellos decían: Su ángel es.
Mas Pedro perseveraba en llamar: y cuando abrieron, viéronle, y se espantaron.
Mas él haciéndoles con la mano señal de que callasen, les contó cómo el Señor le había sacado de la cárcel. Y dijo: Haced saber esto á Jacobo y á los hermanos. Y salió, y partió á otro lugar.
Luego que fué de día, hubo no poco alboroto entre los soldados sobre qué se había hecho de Pedro.
Mas Herodes, como le buscó y no le halló, hecha inquisición de los guardas, los mandó llevar. Después descendiendo de Judea á Cesarea, se quedó allí.
Y Herodes estaba enojado contra los de Tiro y los de Sidón: mas ellos vinieron concordes á él, y sobornado Blasto, que era el camarero del rey, pedían paz; porque las tierras de ellos eran abastecidas por las del rey.
Y un día señalado, Herodes vestido de ropa real, se sentó en el tribunal, y arengóles.
Y el pueblo aclamaba: Voz de Dios, y no de hombre.
Y luego el ángel del Señor le hirió, por cuanto no dió la gloria á Dios; y espiró comido de gusanos.
Mas la palabra del Señor crecía y era multiplicada.
Y Bernabé y Saulo volvieron de Jerusalem cumplido su servicio, tomando también consigo á Juan, el que tenía por sobrenombre Marcos.
Había entonces en la iglesia que estaba en Antioquía, profetas y doctores: Bernabé, y Simón el que se llamaba Niger, y Lucio Cireneo, y Manahén, que había sido criado con Herodes el tetrarca, y Saulo.
Ministrando pues éstos al Señor, y ayunando, dijo el Espíritu Santo: Apartadme á Bernabé y á Saulo para la obra para la cual los he llamado.
Entonces habiendo ayunado y orado, y puesto las manos encima de ellos, despidiéronlos.
Y ellos, enviados así por el Espíritu Santo, descendieron á Seleucia; y de allí navegaron á Cipro.
Y llegados á Salamina, anunciaban la palabra de Dios en las sinagogas de los Judíos: y tenían también á Juan en el ministerio.
Y habiendo atravesado toda la isla hasta Papho, hallaron un hombre mago, falso profeta, Judío, llamado Barjesús;
El cual estaba con el procónsul Sergio Paulo, varón prudente. Este, llamando á Bernabé y á Saulo, deseaba oir la palabra de Dios.
Mas les resistía Elimas el encantador (que así se interpreta su nombre), procurando apartar de la fe al procónsul.
Entonces Saulo, que también es Pablo, lleno del Espíritu Santo, poniendo en él los ojos,
Dijo: Oh, lleno de todo engaño y de toda maldad, hijo del diablo, enemigo de toda justicia, ¿no cesarás de trastornar los caminos rectos del Señor?
Ahora pues, he aquí la mano del Señor es contra ti, y serás ciego, que no veas el sol por tiempo. Y luego cayeron en él obscuridad y tinieblas; y andando alrededor, buscaba quién le condujese por la mano.
Entonces el procónsul, viendo lo que había sido hecho, creyó, maravillado de la doctrina del Señor.
Y partidos de Papho, Pablo y sus compañeros arribaron á Perge de Pamphylia: entonces Juan, apartándose de ellos, se volvió á Jerusalem.
Y ellos pasando de Perge, llegaron á Antioquía de Pisidia, y entrando en la sinagoga un día de sábado, sentáronse.
Y después de la lectura de la ley y de los profetas, los príncipes de la sinagoga enviaron á ellos, diciendo: Varones hermanos, si tenéis alguna palabra de exhortación para el pueblo, hablad.
Entonces Pablo, levantándose, hecha señal de silencio con la mano, dice: Varones Israelitas, y los que teméis á Dios, oid:
El Dios del pueblo de Israel escogió á nuestros padres, y ensalzó al pueblo, siendo ellos extranjeros en la tierra de Egipto, y con brazo levantado los sacó de ella.
Y por tiempo como de cuarenta años soportó sus costumbres en el desierto;
Y destruyendo siete naciones en la tierra de Canaán, les repartió por suerte la tierra de ellas.
Y después, como por cuatrocientos y cincuenta años, dió les jueces hasta el profeta Samuel.
Y entonces demandaron rey; y les dió Dios á Saúl, hijo de Cis, varón de la tribu de Benjamín, por cuarenta años.
Y quitado aquél, levantóles por rey á David, al que dió también testimonio, diciendo: He hallado á David, hijo de Jessé, varón conforme á mi corazón, el cual hará todo lo que yo quiero.
De la simiente de éste, Dios, conforme á la promesa, levantó á Jesús por Salvador á Israel;
Predicando Juan delante de la faz de su venida el bautismo de arrepentimiento á todo el pueblo de Israel.
Mas como Juan cumpliese su carrera, dijo: ¿Quién pensáis que soy? No soy yo él; mas he aquí, viene tras mí uno, cuyo calzado de los pies no soy digno de desatar.
Varones hermanos, hijos del linaje de Abraham, y los que entre vosotros temen á Dios, á vosotros es enviada la palabra de esta salud.
Porque los que habitaban en Jerusalem, y sus príncipes, no conociendo á éste, y las voces de los profetas que se leen todos los sábados, condenándo le, las cumplieron.
Y sin hallar en él causa de muerte, pidieron á Pilato que le matasen.
Y habiendo cumplido todas las cosas que de él estaban escritas, quitándolo del madero, lo pusieron en el sepulcro.
Mas Dios le levantó de los muertos.
Y él fué visto por muchos días de los que habían subido juntamente con él de Galilea á Jerusalem, los cuales son sus testigos al pueblo.
Y nosotros también os anunciamos el evangelio de aquella promesa que fué hecha á los padres,
La cual Dios ha cumplido á los hijos de ellos, á nosotros, resucitando á Jesús: como también en el salmo segundo está escrito: Mi hijo eres tú, yo te he engendrado hoy.
Y que le levantó de los muertos para nunca más volver á corrupción, así lo dijo: Os daré las misericordias fieles de David.
Por eso dice también en otro lugar: No permitirás que tu Santo vea corrupción.
Porque á la verdad David, habiendo servido en su edad á la voluntad de Dios, durmió, y fué juntado con sus padres, y vió corrupción:
Mas aquel que Dios levantó, no vió corrupción.
Séaos pues notorio, varones hermanos, que por éste os es anunciada remisión de pecados;
Y de todo lo que por la ley de Moisés no pudisteis ser justificados, en éste es justificado todo aquel que creyere.
Mirad, pues, que no venga sobre vosotros lo que está dicho en los profetas;
Mirad, oh menospreciadores, y entonteceos, y desvaneceos; porque yo obro una obra en vuestros días, obra que no creeréis, si alguien os la contare.
Y saliendo ellos de la sinagoga de los Judíos, los Gentiles les rogaron que el sábado siguiente les hablasen estas palabras.
Y despedida la congregación, muchos de los Judíos y de los religiosos prosélitos siguieron á Pablo y á Bernabé; los cuales hablándoles, les persuadían que permaneciesen en la gracia de Dios.
Y el sábado siguiente se juntó casi toda la ciudad á oir la palabra de Dios.
Mas los Judíos, visto el gentío, llenáronse de celo, y se oponían á lo que Pablo decía, contradiciendo y blasfemando.
Entonces Pablo y Bernabé, usando de libertad, dijeron: A vosotros á la verdad era menester que se os hablase la palabra de Dios; mas pues que la desecháis, y os juzgáis indignos de la vida eterna, he aquí, nos volvemos á los Gentiles.
Porque así nos ha mandado el Señor, diciendo: Te he puesto para luz de los Gentiles, para que seas salud hasta lo postrero de la tierra.
Y los Gentiles oyendo esto, fueron gozosos, y glorificaban la palabra del Señor: y creyeron todos los que estaban ordenados para vida eterna.
Y la palabra del Señor era sembrada por toda aquella provincia.
Mas los Judíos concitaron mujeres pías y honestas, y á los principales de la ciudad, y levantaron persecución contra Pablo y Bernabé, y los echaron de sus términos.
Ellos entonces sacudiendo en ellos el polvo de sus pies, vinieron á Iconio.
Y los discípulos estaban llenos de gozo, y del Espíritu Santo.
Y aconteció en Iconio, que entrados juntamente en la sinagoga de los Judíos, hablaron de tal manera, que creyó una grande multitud de Judíos, y asimismo de Griegos.
Mas los Judíos que fueron incrédulos, incitaron y corrompieron los ánimos de los Gentiles contra los hermanos.
Con todo eso se detuvieron allí mucho tiempo, confiados en el Señor, el cual daba testimonio á la palabra de su gracia, dando que señales y milagros fuesen hechos por las manos de ellos.
Mas el vulgo de la ciudad estaba dividido; y unos eran con los Judíos, y otros con los apóstoles.
Y haciendo ímpetu los Judíos y los Gentiles juntamente con sus príncipes, para afrentarlos y apedrearlos,
Habiéndolo entendido, huyeron á Listra y Derbe, ciudades de Licaonia, y por toda la tierra alrededor.
Y allí predicaban el evangelio.
Y un hombre de Listra, impotente de los pies, estaba sentado, cojo desde el vientre de su madre, que jamás había andado.
Este oyó hablar á Pablo; el cual, como puso los ojos en él, y vió que tenía fe para ser sano,
Dijo á gran voz: Levántate derecho sobre tus pies. Y saltó, y anduvo.
Entonces las gentes, visto lo que Pablo había hecho, alzaron la voz, diciendo en lengua licaónica: Dioses semejantes á hombres han descendido á nosotros.
Y á Bernabé llamaban Júpiter, y á Pablo, Mercurio, porque era el que llevaba la palabra.
Y el sacerdote de Júpiter, que estaba delante de la ciudad de ellos, trayendo toros y guirnaldas delante de las puertas, quería con el pueblo sacrificar.
Y como lo oyeron los apóstoles Bernabé y Pablo, rotas sus ropas, se lanzaron al gentío, dando voces,
Y diciendo: Varones, ¿por qué hacéis esto? Nosotros también somos hombres semejantes á vosotros, que os anunciamos que de estas vanidades os convirtáis al Dios vivo, que hizo el cielo y la tierra, y la mar, y todo lo que está en ellos:
El cual en las edades pasadas ha dejado á todas las gentes andar en sus caminos;
Si bien no se dejó á sí mismo sin testimonio, haciendo bien, dándonos lluvias del cielo y tiempos fructíferos, hinchiendo de mantenimiento y de alegría nuestros corazones.
Y diciendo estas cosas, apenas apaciguaron el pueblo, para que no les ofreciesen sacrificio.
Entonces sobrevinieron unos Judíos de Antioquía y de Iconio, que persuadieron á la multitud, y habiendo apedreado á Pablo, le sacaron fuera de la ciudad, pensando que estaba muerto.
Mas rodeándole los discípulos, se levantó y entró en la ciudad; y un día después, partió con Bernabé á Derbe.
Y como hubieron anunciado el evangelio á aquella ciudad, y enseñado á muchos, volvieron á Listra, y á Iconio, y á Antioquía,
Confirmando los ánimos de los discípulos, exhortándoles á que permaneciesen en la fe, y que es menester que por muchas tribulaciones entremos en el reino de Dios.
Y habiéndoles constituído ancianos en cada una de las iglesias, y habiendo orado con ayunos, los encomendaron al Señor en el cual habían creído.
Y pasando por Pisidia vinieron á Pamphylia.
Y habiendo predicado la palabra en Perge, descendieron á Atalia;
Y de allí navegaron á Antioquía, donde habían sido encomendados á la gracia de Dios para la obra que habían acabado.
Y habiendo llegado, y reunido la iglesia, relataron cuán grandes cosas había Dios hecho con ellos, y cómo había abierto á los Gentiles la puerta de la fe.
Y se quedaron allí mucho tiempo con los discípulos.
Entonces algunos que venían de Judea enseñaban á los hermanos: Que si no os circuncidáis conforme al rito de Moisés, no podéis ser salvos.
Así que, suscitada una disensión y contienda no pequeña á Pablo y á Bernabé contra ellos, determinaron que subiesen Pablo y Bernabé á Jerusalem, y algunos otros de ellos, á los apóstoles y á los ancianos, sobre esta cuestión.
Ellos, pues, habiendo sido acompañados de la iglesia, pasaron por la Fenicia y Samaria, contando la conversión de los Gentiles; y daban gran gozo á todos los hermanos.
Y llegados á Jerusalem, fueron recibidos de la iglesia y de los apóstoles y de los ancianos: y refirieron todas las cosas que Dios había hecho con ellos.
Mas algunos de la secta de los Fariseos, que habían creído, se levantaron, diciendo: Que es menester circuncidarlos, y mandarles que guarden la ley de Moisés.
Y se juntaron los apóstoles y los ancianos para conocer de este negocio.
Y habiendo habido grande contienda, levantándose Pedro, les dijo: Varones hermanos, vosotros sabéis cómo ya hace algún tiempo que Dios escogió que los Gentiles oyesen por mi boca la palabra del evangelio, y creyesen.
Y Dios, que conoce los corazones, les dió testimonio, dándoles el Espíritu Santo también como á nosotros;
Y ninguna diferencia hizo entre nosotros y ellos, purificando con la fe sus corazones.
Ahora pues, ¿por qué tentáis á Dios, poniendo sobre la cerviz de los discípulos yugo, que ni nuestros padres ni nosotros hemos podido llevar?
Antes por la gracia del Señor Jesús creemos que seremos salvos, como también ellos.
Entonces toda la multitud calló, y oyeron á Bernabé y á Pablo, que contaban cuán grandes maravillas y señales Dios había hecho por ellos entre los Gentiles.
Y después que hubieron callado, Jacobo respondió, diciendo: Varones hermanos, oidme:
Simón ha contado cómo Dios primero visitó á los Gentiles, para tomar de ellos pueblo para su nombre;
Y con esto concuerdan las palabras de los profetas, como está escrito:
Después de esto volveré y restauraré la habitación de David, que estaba caída; y repararé sus ruinas, y la volveré á levantar;
Para que el resto de los hombres busque al Señor, y todos los Gentiles, sobre los cuales es llamado mi nombre, dice el Señor, que hace todas estas cosas.
Conocidas son á Dios desde el siglo todas sus obras.
Por lo cual yo juzgo, que los que de los Gentiles se convierten á Dios, no han de ser inquietados;
Sino escribirles que se aparten de las contaminaciones de los ídolos, y de fornicación, y de ahogado, y de sangre.
Porque Moisés desde los tiempos antiguos tiene en cada ciudad quien le predique en las sinagogas, donde es leído cada sábado.
Entonces pareció bien á los apóstoles y á los ancianos, con toda la iglesia, elegir varones de ellos, y enviarlos á Antioquía con Pablo y Bernabé: á Judas que tenía por sobrenombre Barsabas, y á Silas, varones principales entre los hermanos;
Y escribir por mano de ellos: Los apóstoles y los ancianos y los hermanos, á los hermanos de los Gentiles que están en Antioquía, y en Siria, y en Cilicia, salud:
Por cuanto hemos oído que algunos que han salido de nosotros, os han inquietado con palabras, trastornando vuestras almas, mandando circuncidaros y guardar la ley, á los cuales no mandamos;
Nos ha parecido, congregados en uno, elegir varones, y enviarlos á vosotros con nuestros amados Bernabé y Pablo,
Hombres que han expuesto sus vidas por el nombre de nuestro Señor Jesucristo.
Así que, enviamos á Judas y á Silas, los cuales también por palabra os harán saber lo mismo.
Que ha parecido bien al Espíritu Santo, y á nosotros, no imponeros ninguna carga más que estas cosas necesarias:
Que os abstengáis de cosas sacrificadas á ídolos, y de sangre, y de ahogado, y de fornicación; de las cuales cosas si os guardareis, bien haréis. Pasadlo bien.
Ellos entonces enviados, descendieron á Antioquía; y juntando la multitud, dieron la carta.
La cual, como leyeron, fueron gozosos de la consolación.
Judas también y Silas, como ellos también eran profetas, consolaron y confirmaron á los hermanos con abundancia de palabra.
Y pasando allí algún tiempo, fueron enviados de los hermanos á los apóstoles en paz.
Y Pablo y Bernabé se estaban en Antioquía, enseñando la palabra del Señor y anunciando el evangelio con otros muchos.
Y después de algunos días, Pablo dijo á Bernabé: Volvamos á visitar á los hermanos por todas las ciudades en las cuales hemos anunciado la palabra del Señor, cómo están.
Y Bernabé quería que tomasen consigo á Juan, el que tenía por sobrenombre Marcos;
Mas á Pablo no le parecía bien llevar consigo al que se había apartado de ellos desde Pamphylia, y no había ido con ellos á la obra.
Y hubo tal contención entre ellos, que se apartaron el uno del otro; y Bernabé tomando á Marcos, navegó á Cipro.
Y Pablo escogiendo á Silas, partió encomendado de los hermanos á la gracia del Señor.
Y anduvo la Siria y la Cilicia, confirmando á las iglesias.
Y pasando por Amphípolis y Apolonia, llegaron á Tesalónica, donde estaba la sinagoga de los Judíos.
Y Pablo, como acostumbraba, entró á ellos, y por tres sábados disputó con ellos de las Escrituras,
Declarando y proponiendo, que convenía que el Cristo padeciese, y resucitase de los muertos; y que Jesús, el cual yo os anuncio, decía él, éste era el Cristo.
Y algunos de ellos creyeron, y se juntaron con Pablo y con Silas; y de los Griegos religiosos grande multitud, y mujeres nobles no pocas.
Entonces los Judíos que eran incrédulos, teniendo celos, tomaron consigo á algunos ociosos, malos hombres, y juntando compañía, alborotaron la ciudad; y acometiendo á la casa de Jasón, procuraban sacarlos al pueblo.
Mas no hallándolos, trajeron á Jasón y á algunos hermanos á los gobernadores de la ciudad, dando voces: Estos que alborotan el mundo, también han venido acá;
A los cuales Jasón ha recibido; y todos estos hacen contra los decretos de César, diciendo que hay otro rey, Jesús.
Y alborotaron al pueblo y á los gobernadores de la ciudad, oyendo estas cosas.
Mas recibida satisfacción de Jasón y de los demás, los soltaron.
Entonces los hermanos, luego de noche, enviaron á Pablo y á Silas á Berea; los cuales habiendo llegado, entraron en la sinagoga de los Judíos.
Y fueron éstos más nobles que los que estaban en Tesalónica, pues recibieron la palabra con toda solicitud, escudriñando cada día las Escrituras, si estas cosas eran así.
Así que creyeron muchos de ellos; y mujeres Griegas de distinción, y no pocos hombres.
Mas como entendieron los Judíos de Tesalónica que también en Berea era anunciada la palabra de Dios por Pablo, fueron, y también allí tumultuaron al pueblo.
Empero luego los hermanos enviaron á Pablo que fuese como á la mar; y Silas y Timoteo se quedaron allí.
Y los que habían tomado á cargo á Pablo, le llevaron hasta Atenas; y tomando encargo para Silas y Timoteo, que viniesen á él lo más presto que pudiesen, partieron.
Y esperándolos Pablo en Atenas, su espíritu se deshacía en él viendo la ciudad dada á idolatría.
Así que, disputaba en la sinagoga con los Judíos y religiosos; y en la plaza cada día con los que le ocurrían.
Y algunos filósofos de los Epicúreos y de los Estóicos, disputaban con él; y unos decían: ¿Qué quiere decir este palabrero? Y otros: Parece que es predicador de nuevos dioses: porque les predicaba á Jesús y la resurrección.
Y tomándole, le trajeron al Areópago, diciendo: ¿Podremos saber qué sea esta nueva doctrina que dices?
Porque pones en nuestros oídos unas nuevas cosas: queremos pues saber qué quiere ser esto.
(Entonces todos los Atenienses y los huéspedes extranjeros, en ninguna otra cosa entendían, sino ó en decir ó en oir alguna cosa nueva.)
Estando pues Pablo en medio del Areópago, dijo: Varones Atenienses, en todo os veo como más supersticiosos;
Porque pasando y mirando vuestros santuarios, hallé también un altar en el cual estaba esta inscripción: AL DIOS NO CONOCIDO. Aquél pues, que vosotros honráis sin conocerle, á éste os anuncio yo.
El Dios que hizo el mundo y todas las cosas que en él hay, éste, como sea Señor del cielo y de la tierra, no habita en templos hechos de manos,
Ni es honrado con manos de hombres, necesitado de algo; pues él da á todos vida, y respiración, y todas las cosas;
Y de una sangre ha hecho todo el linaje de los hombres, para que habitasen sobre toda la faz de la tierra; y les ha prefijado el orden de los tiempos, y los términos de la habitación de ellos;
Para que buscasen á Dios, si en alguna manera, palpando, le hallen; aunque cierto no está lejos de cada uno de nosotros:
Porque en él vivimos, y nos movemos, y somos; como también algunos de vuestros poetas dijeron: Porque linaje de éste somos también.
Siendo pues linaje de Dios, no hemos de estimar la Divinidad ser semejante á oro, ó á plata, ó á piedra, escultura de artificio ó de imaginación de hombres.
Empero Dios, habiendo disimulado los tiempos de esta ignorancia, ahora denuncia á todos los hombres en todos los lugares que se arrepientan:
Por cuanto ha establecido un día, en el cual ha de juzgar al mundo con justicia, por aquel varón al cual determinó; dando fe á todos con haberle levantado de los muertos.
Y así como oyeron de la resurrección de los muertos, unos se burlaban, y otros decían: Te oiremos acerca de esto otra vez.
Y así Pablo se salió de en medio de ellos.
Mas algunos creyeron, juntándose con él; entre los cuales también fué Dionisio el del Areópago, y una mujer llamada Dámaris, y otros con ellos.
Pasadas estas cosas, Pablo partió de Atenas, y vino á Corinto.
Y hallando á un Judío llamado Aquila, natural del Ponto, que hacía poco que había venido de Italia, y á Priscila su mujer, (porque Claudio había mandado que todos los Judíos saliesen de Roma) se vino á ellos;
Y porque era de su oficio, posó con ellos, y trabajaba; porque el oficio de ellos era hacer tiendas.
Y disputaba en la sinagoga todos los sábados, y persuadía á Judíos y á Griegos.
Y cuando Silas y Timoteo vinieron de Macedonia, Pablo estaba constreñido por la palabra, testificando á los Judíos que Jesús era el Cristo.
Mas contradiciendo y blasfemando ellos, les dijo, sacudiendo sus vestidos: Vuestra sangre sea sobre vuestra cabeza; yo, limpio; desde ahora me iré á los Gentiles.
Y partiendo de allí, entró en casa de uno llamado Justo, temeroso de Dios, la casa del cual estaba junto á la sinagoga.
Y Crispo, el prepósito de la sinagoga, creyó al Señor con toda su casa: y muchos de los Corintios oyendo creían, y eran bautizados.
Entonces el Señor dijo de noche en visión á Pablo: No temas, sino habla, y no calles:
Porque yo estoy contigo, y ninguno te podrá hacer mal; porque yo tengo mucho pueblo en esta ciudad.
Y se detuvo allí un año y seis meses, enseñándoles la palabra de Dios.
Y siendo Galión procónsul de Acaya, los Judíos se levantaron de común acuerdo contra Pablo, y le llevaron al tribunal,
Diciendo: Que éste persuade á los hombres á honrar á Dios contra la ley.
Y comenzando Pablo á abrir la boca, Galión dijo á los Judíos: Si fuera algún agravio ó algún crimen enorme, oh Judíos, conforme á derecho yo os tolerara:
Mas si son cuestiones de palabras, y de nombres, y de vuestra ley, vedlo vosotros; porque yo no quiero ser juez de estas cosas.
Y los echó del tribunal.
Entonces todos los Griegos tomando á Sóstenes, prepósito de la sinagoga, le herían delante del tribunal: y á Galión nada se le daba de ello.
Mas Pablo habiéndose detenido aún allí muchos días, después se despidió de los hermanos, y navegó á Siria, y con él Priscila y Aquila, habiéndose trasquilado la cabeza en Cencreas, porque tenía voto.
Y llegó á Efeso, y los dejó allí: y él entrando en la sinagoga, disputó con los Judíos,
Los cuales le rogaban que se quedase con ellos por más tiempo; mas no accedió,
Sino que se despidió de ellos, diciendo: Es menester que en todo caso tenga la fiesta que viene, en Jerusalem; mas otra vez volveré á vosotros, queriendo Dios. Y partió de Efeso.
Y habiendo arribado á Cesarea subió á Jerusalem; y después de saludar á la iglesia, descendió á Antioquía.
Y habiendo estado allí algún tiempo, partió, andando por orden la provincia de Galacia, y la Phrygia, confirmando á todos los discípulos.
Llegó entonces á Efeso un Judío, llamado Apolos, natural de Alejandría, varón elocuente, poderoso en las Escrituras.
Este era instruído en el camino del Señor; y ferviente de espíritu, hablaba y enseñaba diligentemente las cosas que son del Señor, enseñando solamente en el bautismo de Juan.
Y comenzó á hablar confiadamente en la sinagoga: al cual como oyeron Priscila y Aquila, le tomaron, y le declararon más particularmente el camino de Dios.
Y queriendo él pasar á Acaya, los hermanos exhortados, escribieron á los discípulos que le recibiesen; y venido él, aprovechó mucho por la gracia á los que habían creído:
Porque con gran vehemencia convencía públicamente á los Judíos, mostrando por las Escrituras que Jesús era el Cristo.
Y aconteció que entre tanto que Apolos estaba en Corinto, Pablo, andadas las regiones superiores, vino á Efeso, y hallando ciertos discípulos,
Díjoles: ¿Habéis recibido el Espíritu Santo después que creísteis? Y ellos le dijeron: Antes ni aun hemos oído si hay Espíritu Santo.
Entonces dijo: ¿En qué pues sois bautizados? Y ellos dijeron: En el bautismo de Juan.
Y dijo Pablo: Juan bautizó con bautismo de arrepentimiento, diciendo al pueblo que creyesen en el que había de venir después de él, es á saber, en Jesús el Cristo.
Oído que hubieron esto, fueron bautizados en el nombre del Señor Jesús.
Y habiéndoles impuesto Pablo las manos, vino sobre ellos el Espíritu Santo; y hablaban en lenguas, y profetizaban.
Y eran en todos como unos doce hombres.
Y entrando él dentro de la sinagoga, hablaba libremente por espacio de tres meses, disputando y persuadiendo del reino de Dios.
Mas endureciéndose algunos y no creyendo, maldiciendo el Camino delante de la multitud, apartándose Pablo de ellos separó á los discípulos, disputando cada día en la escuela de un cierto Tyranno.
Y esto fué por espacio de dos años; de manera que todos los que habitaban en Asia, Judíos y Griegos, oyeron la palabra del Señor Jesús.
Y hacía Dios singulares maravillas por manos de Pablo:
De tal manera que aun se llevaban sobre los enfermos los sudarios y los pañuelos de su cuerpo, y las enfermedades se iban de ellos, y los malos espíritus salían de ellos.
Y algunos de los Judíos, exorcistas vagabundos, tentaron á invocar el nombre del Señor Jesús sobre los que tenían espíritus malos, diciendo: Os conjuro por Jesús, el que Pablo predica.
Y había siete hijos de un tal Sceva, Judío, príncipe de los sacerdotes, que hacían esto.
Y respondiendo el espíritu malo, dijo: A Jesús conozco, y sé quién es Pablo: mas vosotros ¿quiénes sois?
Y el hombre en quien estaba el espíritu malo, saltando en ellos, y enseñoreándose de ellos, pudo más que ellos, de tal manera que huyeron de aquella casa desnudos y heridos.
Y esto fué notorio á todos, así Judíos como Griegos, los que habitaban en Efeso: y cayó temor sobre todos ellos, y era ensalzado el nombre del Señor Jesús.
Y muchos de los que habían creído, venían, confesando y dando cuenta de sus hechos.
Asimismo muchos de los que habían practicado vanas artes, trajeron los libros, y los quemaron delante de todos; y echada la cuenta del precio de ellos, hallaron ser cincuenta mil denarios.
Así crecía poderosamente la palabra del Señor, y prevalecía.
Y acabadas estas cosas, se propuso Pablo en espíritu partir á Jerusalem, después de andada Macedonia y Acaya, diciendo: Después que hubiere estado allá, me será menester ver también á Roma.
Y enviando á Macedonia á dos de los que le ayudaban, Timoteo y Erasto, él se estuvo por algún tiempo en Asia.
Entonces hubo un alboroto no pequeño acerca del Camino.
Porque un platero llamado Demetrio, el cual hacía de plata templecillos de Diana, daba á los artífices no poca ganancia;
A los cuales, reunidos con los oficiales de semejante oficio, dijo: Varones, sabéis que de este oficio tenemos ganancia;
Y veis y oís que este Pablo, no solamente en Efeso, sino á muchas gentes de casi toda el Asia, ha apartado con persuasión, diciendo, que no son dioses los que se hacen con las manos.
Y no solamente hay peligro de que este negocio se nos vuelva en reproche, sino también que el templo de la gran diosa Diana sea estimado en nada, y comience á ser destruída su majestad, la cual honra toda el Asia y el mundo.
Oídas estas cosas, llenáronse de ira, y dieron alarido, diciendo: ¡Grande es Diana de los Efesios!
Y la ciudad se llenó de confusión; y unánimes se arrojaron al teatro, arrebatando á Gayo y á Aristarco, Macedonios, compañeros de Pablo.
Y queriendo Pablo salir al pueblo, los discípulos no le dejaron.
También algunos de los principales de Asia, que eran sus amigos, enviaron á él rogando que no se presentase en el teatro.
Y otros gritaban otra cosa; porque la concurrencia estaba confusa, y los más no sabían por qué se habían juntado.
Y sacaron de entre la multitud á Alejandro, empujándole los Judíos. Entonces Alejandro, pedido silencio con la mano, quería dar razón al pueblo.
Mas como conocieron que era Judío, fué hecha un voz de todos, que gritaron casi por dos horas: ¡Grande es Diana de los Efesios!
Entonces el escribano, apaciguado que hubo la gente, dijo: Varones Efesios, ¿y quién hay de los hombres que no sepa que la ciudad de los Efesios es honradora de la gran diosa Diana, y de la imagen venida de Júpiter?
Así que, pues esto no puede ser contradicho, conviene que os apacigüéis, y que nada hagáis temerariamente;
Pues habéis traído á estos hombres, sin ser sacrílegos ni blasfemadores de vuestra diosa.
Que si Demetrio y los oficiales que están con él tienen negocio con alguno, audiencias se hacen, y procónsules hay; acúsense los unos á los otros.
Y si demandáis alguna otra cosa, en legítima asamblea se pueda decidir.
Porque peligro hay de que seamos argüidos de sedición por hoy, no habiendo ninguna causa por la cual podamos dar razón de este concurso. Y habiendo dicho esto, despidió la concurrencia.
Y después que cesó el alboroto, llamando Pablo á los discípulos habiéndoles exhortado y abrazado, se despidió, y partió para ir á Macedonia.
Y andado que hubo aquellas partes, y exhortádoles con abundancia de palabra, vino á Grecia.
Y después de haber estado allí tres meses, y habiendo de navegar á Siria, le fueron puestas asechanzas por los Judíos; y así tomó consejo de volverse por Macedonia.
Y le acompañaron hasta Asia Sopater Bereense, y los Tesalonicenses, Aristarco y Segundo; y Gayo de Derbe, y Timoteo; y de Asia, Tychîco y Trófimo.
Estos yendo delante, nos esperaron en Troas.
Y nosotros, pasados los días de los panes sin levadura, navegamos de Filipos y vinimos á ellos á Troas en cinco días, donde estuvimos siete días.
Y el día primero de la semana, juntos los discípulos á partir el pan, Pablo les enseñaba, habiendo de partir al día siguiente: y alargó el discurso hasta la media noche.
Y había muchas lámparas en el aposento alto donde estaban juntos.
Y un mancebo llamado Eutichô que estaba sentado en la ventana, tomado de un sueño profundo, como Pablo disputaba largamente, postrado del sueño cayó del tercer piso abajo, y fué alzado muerto.
Entonces descendió Pablo, y derribóse sobre él, y abrazándole, dijo: No os alborotéis, que su alma está en él.
Después subiendo, y partiendo el pan, y gustando, habló largamente hasta el alba, y así partió.
Y llevaron al mozo vivo, y fueron consolados no poco.
Y nosotros subiendo en el navío, navegamos á Assón, para recibir de allí á Pablo; pues así había determinado que debía él ir por tierra.
Y como se juntó con nosotros en Assón, tomándole vinimos á Mitilene.
Y navegando de allí, al día siguiente llegamos delante de Chîo, y al otro día tomamos puerto en Samo: y habiendo reposado en Trogilio, al día siguiente llegamos á Mileto.
Porque Pablo se había propuesto pasar adelante de Efeso; por no detenerse en Asia: porque se apresuraba por hacer el día de Pentecostés, si le fuese posible, en Jerusalem.
Y enviando desde Mileto á Efeso, hizo llamar á los ancianos de la iglesia.
Y cuando vinieron á él, les dijo: Vosotros sabéis cómo, desde el primer día que entré en Asia, he estado con vosotros por todo el tiempo,
Sirviendo al Señor con toda humildad, y con muchas lágrimas, y tentaciones que me han venido por las asechanzas de los Judíos:
Cómo nada que fuese útil he rehuído de anunciaros y enseñaros, públicamente y por las casas,
Testificando á los Judíos y á los Gentiles arrepentimiento para con Dios, y la fe en nuestro Señor Jesucristo.
Y ahora, he aquí, ligado yo en espíritu, voy á Jerusalem, sin saber lo que allá me ha de acontecer:
Mas que el Espíritu Santo por todas las ciudades me da testimonio, diciendo que prisiones y tribulaciones me esperan.
Mas de ninguna cosa hago caso, ni estimo mi vida preciosa para mí mismo; solamente que acabe mi carrera con gozo, y el ministerio que recibí del Señor Jesús, para dar testimonio del evangelio de la gracia de Dios.
Y ahora, he aquí, yo sé que ninguno de todos vosotros, por quien he pasado predicando el reino de Dios, verá más mi rostro.
Por tanto, yo os protesto el día de hoy, que yo soy limpio de la sangre de todos:
Porque no he rehuído de anunciaros todo el consejo de Dios.
Por tanto mirad por vosotros, y por todo el rebaño en que el Espíritu Santo os ha puesto por obispos, para apacentar la iglesia del Señor, la cual ganó por su sangre.
Porque yo sé que después de mi partida entrarán en medio de vosotros lobos rapaces, que no perdonarán al ganado;
Y de vosotros mismos se levantarán hombres que hablen cosas perversas, para llevar discípulos tras sí.
Por tanto, velad, acordándoos que por tres años de noche y de día, no he cesado de amonestar con lágrimas á cada uno.
Y ahora, hermanos, os encomiendo á Dios, y á la palabra de su gracia: el cual es poderoso para sobreedificar, y daros heredad con todos los santificados.
La plata, ó el oro, ó el vestido de nadie he codiciado.
Antes vosotros sabéis que para lo que me ha sido necesario, y á los que están conmigo, estas manos me han servido.
En todo os he enseñado que, trabajando así, es necesario sobrellevar á los enfermos, y tener presente las palabras del Señor Jesús, el cual dijo: Más bienaventurada cosa es dar que recibir.
Y como hubo dicho estas cosas, se puso de rodillas, y oró con todos ellos.
Entonces hubo un gran lloro de todos: y echándose en el cuello de Pablo, le besaban,
Doliéndose en gran manera por la palabra que dijo, que no habían de ver más su rostro. Y le acompañaron al navío.
Varones hermanos y padres, oid la razón que ahora os doy.
(Y como oyeron que les hablaba en lengua hebrea, guardaron más silencio.) Y dijo:
Yo de cierto soy Judío, nacido en Tarso de Cilicia, mas criado en esta ciudad á los pies de Gamaliel, enseñado conforme á la verdad de la ley de la patria, celoso de Dios, como todos vosotros sois hoy.
Que he perseguido este camino hasta la muerte, prendiendo y entregando en cárceles hombres y mujeres:
Como también el príncipe de los sacerdotes me es testigo, y todos los ancianos; de los cuales también tomando letras á los hermanos, iba á Damasco para traer presos á Jerusalem aun á los que estuviesen allí, para que fuesen castigados.
Mas aconteció que yendo yo, y llegando cerca de Damasco, como á medio día, de repente me rodeó mucha luz del cielo:
Y caí en el suelo, y oí una voz que me decía: Saulo, Saulo, ¿por qué me persigues?
Yo entonces respondí: ¿Quién eres, Señor? Y me dijo: Yo soy Jesús de Nazaret, á quien tú persigues.
Y los que estaban conmigo vieron á la verdad la luz, y se espantaron; mas no oyeron la voz del que hablaba conmigo.
Y dije: ¿Qué haré, Señor? Y el Señor me dijo: Levántate, y ve á Damasco, y allí te será dicho todo lo que te está señalado hacer.
Y como yo no viese por causa de la claridad de la luz, llevado de la mano por los que estaban conmigo, vine á Damasco.
Entonces un Ananías, varón pío conforme á la ley, que tenía buen testimonio de todos los Judíos que allí moraban,
Viniendo á mí, y acercándose, me dijo: Hermano Saulo, recibe la vista. Y yo en aquella hora le miré.
Y él dijo: El Dios de nuestros padres te ha predestinado para que conocieses su voluntad, y vieses á aquel Justo, y oyeses la voz de su boca.
Porque has de ser testigo suyo á todos los hombres, de lo que has visto y oído.
Ahora pues, ¿por qué te detienes? Levántate, y bautízate, y lava tus pecados, invocando su nombre.
Y me aconteció, vuelto á Jerusalem, que orando en el templo, fuí arrebatado fuera de mí.
Y le vi que me decía: Date prisa, y sal prestamente fuera de Jerusalem; porque no recibirán tu testimonio de mí.
Y yo dije: Señor, ellos saben que yo encerraba en cárcel, y hería por las sinagogas á los que creían en ti;
Y cuando se derramaba la sangre de Esteban tu testigo, yo también estaba presente, y consentía á su muerte, y guardaba las ropas de los que le mataban.
Y me dijo: Ve, porque yo te tengo que enviar lejos á los Gentiles.
Y le oyeron hasta esta palabra: entonces alzaron la voz, diciendo: Quita de la tierra á un tal hombre, porque no conviene que viva.
Y dando ellos voces, y arrojando sus ropas y echando polvo al aire,
Mandó el tribuno que le llevasen á la fortaleza, y ordenó que fuese examinado con azotes, para saber por qué causa clamaban así contra él.
Y como le ataron con correas, Pablo dijo al centurión que estaba presente: ¿Os es lícito azotar á un hombre Romano sin ser condenado?
Y como el centurión oyó esto, fué y dió aviso al tribuno, diciendo: ¿Qué vas á hacer? porque este hombre es Romano.
Y viniendo el tribuno, le dijo: Dime, ¿eres tú Romano? Y él dijo: Sí.
Y respondió el tribuno: Yo con grande suma alcancé esta ciudadanía. Entonces Pablo dijo: Pero yo lo soy de nacimiento.
Así que, luego se apartaron de él los que le habían de atormentar: y aun el tribuno también tuvo temor, entendido que era Romano, por haberle atado.
Y al día siguiente, queriendo saber de cierto la causa por qué era acusado de los Judíos, le soltó de las prisiones, y mandó venir á los príncipes de los sacerdotes, y á todo su concilio: y sacando á Pablo, le presentó delante de ellos.
Entonces Pablo, poniendo los ojos en el concilio, dice: Varones hermanos, yo con toda buena conciencia he conversado delante de Dios hasta el día de hoy.
El príncipe de los sacerdotes, Ananías, mandó entonces á los que estaban delante de él, que le hiriesen en la boca.
Entonces Pablo le dijo: Herirte ha Dios, pared blanqueada: ¿y estás tú sentado para juzgarme conforme á la ley, y contra la ley me mandas herir?
Y los que estaban presentes dijeron: ¿Al sumo sacerdote de Dios maldices?
Y Pablo dijo: No sabía, hermanos, que era el sumo sacerdote; pues escrito está: Al príncipe de tu pueblo no maldecirás.
Entonces Pablo, sabiendo que la una parte era de Saduceos, y la otra de Fariseos, clamó en el concilio: Varones hermanos, yo soy Fariseo, hijo de Fariseo: de la esperanza y de la resurrección de los muertos soy yo juzgado.
Y como hubo dicho esto, fué hecha disensión entre los Fariseos y los Saduceos; y la multitud fué dividida.
Porque los Saduceos dicen que no hay resurrección, ni ángel, ni espíritu; mas los Fariseos confiesan ambas cosas.
Y levantóse un gran clamor: y levantándose los escribas de la parte de los Fariseos, contendían diciendo: Ningún mal hallamos en este hombre; que si espíritu le ha hablado, ó ángel, no resistamos á Dios.
Y habiendo grande disensión, el tribuno, teniendo temor de que Pablo fuese despedazado de ellos, mandó venir soldados, y arrebatarle de en medio de ellos, y llevarle á la fortaleza.
Y la noche siguiente, presentándosele el Señor, le dijo: Confía, Pablo; que como has testificado de mí en Jerusalem, así es menester testifiques también en Roma.
Y venido el día, algunos de los Judíos se juntaron, é hicieron voto bajo de maldición, diciendo que ni comerían ni beberían hasta que hubiesen muerto á Pablo.
Y eran más de cuarenta los que habían hecho esta conjuración;
Los cuales se fueron á los príncipes de los sacerdotes y á los ancianos, y dijeron: Nosotros hemos hecho voto debajo de maldición, que no hemos de gustar nada hasta que hayamos muerto á Pablo.
Ahora pues, vosotros, con el concilio, requerid al tribuno que le saque mañana á vosotros como que queréis entender de él alguna cosa más cierta; y nosotros, antes que él llegue, estaremos aparejados para matarle.
Entonces un hijo de la hermana de Pablo, oyendo las asechanzas, fué, y entró en la fortaleza, y dió aviso á Pablo.
Y Pablo, llamando á uno de los centuriones, dice: Lleva á este mancebo al tribuno, porque tiene cierto aviso que darle.
El entonces tomándole, le llevó al tribuno, y dijo: El preso Pablo, llamándome, me rogó que trajese á ti este mancebo, que tiene algo que hablarte.
Y el tribuno, tomándole de la mano y retirándose aparte, le preguntó: ¿Qué es lo que tienes que decirme?
Y él dijo: Los Judíos han concertado rogarte que mañana saques á Pablo al concilio, como que han de inquirir de él alguna cosa más cierta.
Mas tú no los creas; porque más de cuarenta hombres de ellos le acechan, los cuales han hecho voto debajo de maldición, de no comer ni beber hasta que le hayan muerto; y ahora están apercibidos esperando tu promesa.
Entonces el tribuno despidió al mancebo, mandándole que á nadie dijese que le había dado aviso de esto.
Y llamados dos centuriones, mandó que apercibiesen para la hora tercia de la noche doscientos soldados, que fuesen hasta Cesarea, y setenta de á caballo, y doscientos lanceros;
Y que aparejasen cabalgaduras en que poniendo á Pablo, le llevasen en salvo á Félix el Presidente.
Y escribió una carta en estos términos:
Claudio Lisias al excelentísimo gobernador Félix: Salud.
A este hombre, aprehendido de los Judíos, y que iban ellos á matar, libré yo acudiendo con la tropa, habiendo entendido que era Romano.
Y queriendo saber la causa por qué le acusaban, le llevé al concilio de ellos:
Y hallé que le acusaban de cuestiones de la ley de ellos, y que ningún crimen tenía digno de muerte ó de prisión.
Mas siéndome dado aviso de asechanzas que le habían aparejado los Judíos, luego al punto le he enviado á ti, intimando también á los acusadores que traten delante de ti lo que tienen contra él. Pásalo bien.
Y los soldados, tomando á Pablo como les era mandado, lleváronle de noche á Antipatris.
Y al día siguiente, dejando á los de á caballo que fuesen con él, se volvieron á la fortaleza.
Y como llegaron á Cesarea, y dieron la carta al gobernador, presentaron también á Pablo delante de él.
Y el gobernador, leída la carta, preguntó de qué provincia era; y entendiendo que de Cilicia,
Te oiré, dijo, cuando vinieren tus acusadores. Y mandó que le guardasen en el pretorio de Herodes.
Y cinco días después descendió el sumo sacerdote Ananías, con algunos de los ancianos, y un cierto Tértulo, orador; y parecieron delante del gobernador contra Pablo.
Y citado que fué, Tértulo comenzó á acusar, diciendo: Como por causa tuya vivamos en grande paz, y muchas cosas sean bien gobernadas en el pueblo por tu prudencia,
Siempre y en todo lugar lo recibimos con todo hacimiento de gracias, oh excelentísimo Félix.
Empero por no molestarte más largamente, ruégote que nos oigas brevemente conforme á tu equidad.
Porque hemos hallado que este hombre es pestilencial, y levantador de sediciones entre todos los Judíos por todo el mundo, y príncipe de la secta de los Nazarenos:
El cual también tentó á violar el templo; y prendiéndole, le quisimos juzgar conforme á nuestra ley:
Mandando á sus acusadores que viniesen á ti; del cual tú mismo juzgando, podrás entender todas estas cosas de que le acusamos.
Y contendían también los Judíos, diciendo ser así estas cosas.
Entonces Pablo, haciéndole el gobernador señal que hablase, respondió: Porque sé que muchos años ha eres gobernador de esta nación, con buen ánimo satisfaré por mí.
Porque tú puedes entender que no hace más de doce días que subí á adorar á Jerusalem;
Y ni me hallaron en el templo disputando con ninguno, ni haciendo concurso de multitud, ni en sinagogas, ni en la ciudad;
Ni te pueden probar las cosas de que ahora me acusan.
Esto empero te confieso, que conforme á aquel Camino que llaman herejía, así sirvo al Dios de mis padres, creyendo todas las cosas que en la ley y en los profetas están escritas;
Teniendo esperanza en Dios que ha de haber resurrección de los muertos, así de justos como de injustos, la cual también ellos esperan.
Y por esto, procuro yo tener siempre conciencia sin remordimiento acerca de Dios y acerca de los hombres.
Mas pasados muchos años, vine á hacer limosnas á mi nación, y ofrendas,
Cuando me hallaron purificado en el templo (no con multitud ni con alboroto) unos Judíos de Asia;
Los cuales debieron comparecer delante de ti, y acusarme, si contra mí tenían algo.
O digan estos mismos si hallaron en mí alguna cosa mal hecha, cuando yo estuve en el concilio,
Si no sea que, estando entre ellos prorrumpí en alta voz: Acerca de la resurrección de los muertos soy hoy juzgado de vosotros.
Entonces Félix, oídas estas cosas, estando bien informado de esta secta, les puso dilación, diciendo: Cuando descendiere el tribuno Lisias acabaré de conocer de vuestro negocio.
Y mandó al centurión que Pablo fuese guardado, y aliviado de las prisiones; y que no vedase á ninguno de sus familiares servirle, ó venir á él.
Y algunos días después, viniendo Félix con Drusila, su mujer, la cual era Judía, llamó á Pablo, y oyó de él la fe que es en Jesucristo.
Y disertando él de la justicia, y de la continencia, y del juicio venidero, espantado Félix, respondió: Ahora vete; mas en teniendo oportunidad te llamaré:
Esperando también con esto, que de parte de Pablo le serían dados dineros, porque le soltase; por lo cual, haciéndole venir muchas veces, hablaba con él.
Mas al cabo de dos años recibió Félix por sucesor á Porcio Festo: y queriendo Félix ganar la gracia de los Judíos, dejó preso á Pablo.
Festo pues, entrado en la provincia, tres días después subió de Cesarea á Jerusalem.
Y vinieron á él los príncipes de los sacerdotes y los principales de los Judíos contra Pablo; y le rogaron,
Pidiendo gracia contra él, que le hiciese traer á Jerusalem, poniendo ellos asechanzas para matarle en el camino.
Mas Festo respondió, que Pablo estaba guardado en Cesarea, y que él mismo partiría presto.
Los que de vosotros pueden, dijo, desciendan juntamente; y si hay algún crimen en este varón, acúsenle.
Y deteniéndose entre ellos no más de ocho ó diez días, venido á Cesarea, el siguiente día se sentó en el tribunal, y mandó que Pablo fuese traído.
El cual venido, le rodearon los Judíos que habían venido de Jerusalem, poniendo contra Pablo muchas y graves acusaciones, las cuales no podían probar;
Alegando él por su parte: Ni contra la ley de los Judíos, ni contra el templo, ni contra César he pecado en nada.
Mas Festo, queriendo congraciarse con los Judíos, respondiendo á Pablo, dijo: ¿Quieres subir á Jerusalem, y allá ser juzgado de estas cosas delante de mí?
Y Pablo dijo: Ante el tribunal de César estoy, donde conviene que sea juzgado. A los Judíos no he hecho injuria ninguna, como tú sabes muy bien.
Porque si alguna injuria, ó cosa alguna digna de muerte he hecho, no rehuso morir; mas si nada hay de las cosas de que éstos me acusan, nadie puede darme á ellos. A César apelo.
Entonces Festo, habiendo hablado con el consejo, respondió: ¿A César has apelado? á César irás.
Y pasados algunos días, el rey Agripa y Bernice vinieron á Cesarea á saludar á Festo.
Y como estuvieron allí muchos días, Festo declaró la causa de Pablo al rey, diciendo: Un hombre ha sido dejado preso por Félix,
Sobre el cual, cuando fuí á Jerusalem, vinieron á mí los príncipes de los sacerdotes y los ancianos de los Judíos, pidiendo condenación contra él:
A los cuales respondí, no ser costumbre de los Romanos dar alguno á la muerte antes que el que es acusado tenga presentes sus acusadores, y haya lugar de defenderse de la acusación.
Así que, habiendo venido ellos juntos acá, sin ninguna dilación, al día siguiente, sentado en el tribunal, mandé traer al hombre;
Y estando presentes los acusadores, ningún cargo produjeron de los que yo sospechaba:
Solamente tenían contra él ciertas cuestiones acerca de su superstición, y de un cierto Jesús, difunto, el cual Pablo afirmaba que estaba vivo.
Y yo, dudando en cuestión semejante, dije, si quería ir á Jerusalem, y allá ser juzgado de estas cosas.
Mas apelando Pablo á ser guardado al conocimiento de Augusto, mandé que le guardasen hasta que le enviara á César.
Entonces Agripa dijo á Festo: Yo también quisiera oir á ese hombre. Y él dijo: Mañana le oirás.
Y al otro día, viniendo Agripa y Bernice con mucho aparato, y entrando en la audiencia con los tribunos y principales hombres de la ciudad, por mandato de Festo, fué traído Pablo.
Entonces Festo dijo: Rey Agripa, y todos los varones que estáis aquí juntos con nosotros: veis á éste, por el cual toda la multitud de los Judíos me ha demandado en Jerusalem y aquí, dando voces que no conviene que viva más;
Mas yo, hallando que ninguna cosa digna de muerte ha hecho, y él mismo apelando á Augusto, he determinado enviarle:
Del cual no tengo cosa cierta que escriba al señor; por lo que le he sacado á vosotros, y mayormente á tí, oh rey Agripa, para que hecha información, tenga yo qué escribir.
Porque fuera de razón me parece enviar un preso, y no informar de las causas.
Mas como fué determinado que habíamos de navegar para Italia, entregaron á Pablo y á algunos otros presos á un centurión, llamado Julio, de la compañía Augusta.
Así que, embarcándonos en una nave Adrumentina, partimos, estando con nosotros Aristarco, Macedonio de Tesalónica, para navegar junto á los lugares de Asia.
Y otro día llegamos á Sidón; y Julio, tratando á Pablo con humanidad, permitióle que fuese á los amigos, para ser de ellos asistido.
Y haciéndonos á la vela desde allí, navegamos bajo de Cipro, porque los vientos eran contrarios.
Y habiendo pasado la mar de Cilicia y Pamphylia, arribamos á Mira, ciudad de Licia.
Y hallando allí el centurión una nave Alejandrina que navegaba á Italia, nos puso en ella.
Y navegando muchos días despacio, y habiendo apenas llegado delante de Gnido, no dejándonos el viento, navegamos bajo de Creta, junto á Salmón.
Y costeándola difícilmente, llegamos á un lugar que llaman Buenos Puertos, cerca del cual estaba la ciudad de Lasea.
Y pasado mucho tiempo, y siendo ya peligrosa la navegación, porque ya era pasado el ayuno, Pablo amonestaba,
Diciéndoles: Varones, veo que con trabajo y mucho daño, no sólo de la cargazón y de la nave, mas aun de nuestras personas, habrá de ser la navegación.
Mas el centurión creía más al piloto y al patrón de la nave, que á lo que Pablo decía.
Y no habiendo puerto cómodo para invernar, muchos acordaron pasar aún de allí, por si pudiesen arribar á Fenice é invernar allí, que es un puerto de Creta que mira al Nordeste y Sudeste.
Y soplando el austro, pareciéndoles que ya tenían lo que deseaban, alzando velas, iban cerca de la costa de Creta.
Mas no mucho después dió en ella un viento repentino, que se llama Euroclidón.
Y siendo arrebatada la nave, y no pudiendo resistir contra el viento, la dejamos, y éramos llevados.
Y habiendo corrido á sotavento de una pequeña isla que se llama Clauda, apenas pudimos ganar el esquife:
El cual tomado, usaban de remedios, ciñendo la nave; y teniendo temor de que diesen en la Sirte, abajadas las velas, eran así llevados.
Mas siendo atormentados de una vehemente tempestad, al siguiente día alijaron;
Y al tercer día nosotros con nuestras manos arrojamos los aparejos de la nave.
Y no pareciendo sol ni estrellas por muchos días, y viniendo una tempestad no pequeña, ya era perdida toda la esperanza de nuestra salud.
Entonces Pablo, habiendo ya mucho que no comíamos, puesto en pie en medio de ellos, dijo: Fuera de cierto conveniente, oh varones, haberme oído, y no partir de Creta, y evitar este inconveniente y daño.
Mas ahora os amonesto que tengáis buen ánimo; porque ninguna pérdida habrá de persona de vosotros, sino solamente de la nave.
Porque esta noche ha estado conmigo el ángel del Dios del cual yo soy, y al cual sirvo,
Diciendo: Pablo, no temas; es menester que seas presentado delante de César; y he aquí, Dios te ha dado todos los que navegan contigo.
Por tanto, oh varones, tened buen ánimo; porque yo confío en Dios que será así como me ha dicho;
Si bien es menester que demos en una isla.
Y venida la décimacuarta noche, y siendo llevados por el mar Adriático, los marineros á la media noche sospecharon que estaban cerca de alguna tierra;
Y echando la sonda, hallaron veinte brazas; y pasando un poco más adelante, volviendo á echar la sonda, hallaron quince brazas.
Y habiendo temor de dar en lugares escabrosos, echando cuatro anclas de la popa, deseaban que se hiciese de día.
Entonces procurando los marineros huir de la nave, echado que hubieron el esquife á la mar, aparentando como que querían largar las anclas de proa,
Pablo dijo al centurión y á los soldados: Si éstos no quedan en la nave, vosotros no podéis salvaros.
Entonces los soldados cortaron los cabos del esquife, y dejáronlo perder.
Y como comenzó á ser de día, Pablo exhortaba á todos que comiesen, diciendo: Este es el décimocuarto día que esperáis y permanecéis ayunos, no comiendo nada.
Por tanto, os ruego que comáis por vuestra salud: que ni aun un cabello de la cabeza de ninguno de vosotros perecerá.
Y habiendo dicho esto, tomando el pan, hizo gracias á Dios en presencia de todos, y partiendo, comenzó á comer.
Entonces todos teniendo ya mejor ánimo, comieron ellos también.
Y éramos todas las personas en la nave doscientas setenta y seis.
Y satisfechos de comida, aliviaban la nave, echando el grano á la mar.
Y como se hizo de día, no conocían la tierra: mas veían un golfo que tenía orilla, al cual acordaron echar, si pudiesen, la nave.
Cortando pues las anclas, las dejaron en la mar, largando también las ataduras de los gobernalles; y alzada la vela mayor al viento, íbanse á la orilla.
Mas dando en un lugar de dos aguas, hicieron encallar la nave; y la proa, hincada, estaba sin moverse, y la popa se abría con la fuerza de la mar.
Entonces el acuerdo de los soldados era que matasen los presos, porque ninguno se fugase nadando.
Mas el centurión, queriendo salvar á Pablo, estorbó este acuerdo, y mandó que los que pudiesen nadar, se echasen los primeros, y saliesen á tierra;
Y los demás, parte en tablas, parte en cosas de la nave. Y así aconteció que todos se salvaron saliendo á tierra.
Y cuando escapamos, entonces supimos que la isla se llamaba Melita.
Y los bárbaros nos mostraron no poca humanidad; porque, encendido un fuego, nos recibieron á todos, á causa de la lluvia que venía, y del frío.
Entonces habiendo Pablo recogido algunos sarmientos, y puéstolos en el fuego, una víbora, huyendo del calor, le acometió á la mano.
Y como los bárbaros vieron la víbora colgando de su mano, decían los unos á los otros: Ciertamente este hombre es homicida, á quien, escapado de la mar, la justicia no deja vivir.
Mas él, sacudiendo la víbora en el fuego, ningún mal padeció.
Empero ellos estaban esperando cuándo se había de hinchar, ó caer muerto de repente; mas habiendo esperado mucho, y viendo que ningún mal le venía, mudados, decían que era un dios.
En aquellos lugares había heredades del principal de la isla, llamado Publio, el cual nos recibió y hospedó tres días humanamente.
Y aconteció que el padre de Publio estaba en cama, enfermo de fiebres y de disentería: al cual Pablo entró, y después de haber orado, le puso las manos encima, y le sanó:
Y esto hecho, también los otros que en la isla tenían enfermedades, llegaban, y eran sanados:
Los cuales también nos honraron con muchos obsequios; y cuando partimos, nos cargaron de las cosas necesarias.
Así que, pasados tres meses, navegamos en una nave Alejandrina que había invernado en la isla, la cual tenía por enseña á Cástor y Pólux.
Y llegados á Siracusa, estuvimos allí tres días.
De allí, costeando alrededor, vinimos á Regio; y otro día después, soplando el austro, vinimos al segundo día á Puteolos:
Donde habiendo hallado hermanos, nos rogaron que quedásemos con ellos siete días; y luego vinimos á Roma;
De donde, oyendo de nosotros los hermanos, nos salieron á recibir hasta la plaza de Appio, y Las Tres Tabernas: á los cuales como Pablo vió, dió gracias á Dios, y tomó aliento.
Y como llegamos á Roma, el centurión entregó los presos al prefecto de los ejércitos, mas á Pablo fué permitido estar por sí, con un soldado que le guardase.
Y aconteció que tres días después, Pablo convocó á los principales de los Judíos; á los cuales, luego que estuvieron juntos, les dijo: Yo, varones hermanos, no habiendo hecho nada contra el pueblo, ni contra los ritos de la patria, he sido entregado preso desde Jerusalem en manos de los Romanos;
Los cuales, habiéndome examinado, me querían soltar, por no haber en mí ninguna causa de muerte.
Mas contradiciendo los Judíos, fuí forzado á apelar á César; no que tenga de qué acusar á mi nación.
Así que, por esta causa, os he llamado para veros y hablaros; porque por la esperanza de Israel estoy rodeado de esta cadena.
Entonces ellos le dijeron: Nosotros ni hemos recibido cartas tocante á ti de Judea, ni ha venido alguno de los hermanos que haya denunciado ó hablado algún mal de ti.
Mas querríamos oir de ti lo que sientes; porque de esta secta notorio nos es que en todos lugares es contradicha.
Y habiéndole señalado un día, vinieron á él muchos á la posada, á los cuales declaraba y testificaba el reino de Dios, persuadiéndoles lo concerniente á Jesús, por la ley de Moisés y por los profetas, desde la mañana hasta la tarde.
Y algunos asentían á lo que se decía, mas algunos no creían.
Y como fueron entre sí discordes, se fueron, diciendo Pablo esta palabra: Bien ha hablado el Espíritu Santo por el profeta Isaías á nuestros padres,
Diciendo: Ve á este pueblo, y di les: De oído oiréis, y no entenderéis; y viendo veréis, y no percibiréis:
Porque el corazón de este pueblo se ha engrosado, y de los oídos oyeron pesadamente, y sus ojos taparon; porque no vean con los ojos, y oigan con los oídos, y entiendan de corazón, y se conviertan, y yo los sane.
Séaos pues notorio que á los Gentiles es enviada esta salud de Dios: y ellos oirán.
Y habiendo dicho esto, los Judíos salieron, teniendo entre sí gran contienda.
Pablo empero, quedó dos años enteros en su casa de alquiler, y recibía á todos los que á él venían,
Predicando el reino de Dios y enseñando lo que es del Señor Jesucristo con toda libertad, sin impedimento.
